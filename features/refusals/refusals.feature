@refusals
Feature: What the production gateway refuses
  The gateway refuses a follow-up that does not carry the merchant's own login or the order's own
  client_orderid, and declines a card whose expiry date has passed. The simulator refuses the same
  requests, naming the field and the rule, so that an integration bug shows before the sandbox.
  A lenient simulator (gatekit simulate --lenient) forgives @strict ones on purpose: they are skipped.

  @capture @strict
  Scenario: A follow-up without the merchant's login is refused
    Given an approved preauth of 10.00 EUR
    When the merchant tries to capture the order without its login
    Then the gateway refuses the request saying "login: is required by capture"

  @return
  Scenario: A follow-up with another merchant's login is refused
    Given an approved sale of 10.00 EUR
    When the merchant tries to return the order with the login "someone-else"
    Then the gateway refuses the request saying "login: someone-else is not the merchant of endpoint"

  @return @strict
  Scenario: A follow-up with another order's client_orderid is refused
    Given an approved sale of 10.00 EUR
    When the merchant tries to return the order with the client_orderid of another order
    Then the gateway refuses the request saying "is not the client_orderid of orderid"

  @sale @declines @strict
  Scenario: A card past its expiry date is declined as expired
    Given a card whose expiry date has passed
    When the merchant sends a sale of 10.42 EUR
    Then the order is declined with "Expired card"

  @sale
  Scenario: A card whose expiry year is written with two digits is accepted
    Given an approved card whose expiry year is written with two digits
    When the merchant sends a sale of 10.42 EUR
    Then the order is approved
