@chargebacks @simulator
Feature: Chargebacks
  The cardholder's bank takes money back from the merchant. The order shows the chargeback, the
  merchant is called back at the order's notify_url, and what may still be returned shrinks.
  A sandbox cannot be asked for a chargeback, so these scenarios need the simulator.

  Background:
    Given the merchant's back end is listening for callbacks and payer redirects

  Scenario: A chargeback shows on the order and limits what may still be returned
    Given an approved sale of 10.00 EUR
    When the issuer charges back 4.00 EUR of the order
    Then the order's latest transaction is an approved chargeback of 4.00 EUR
    And a further return of 6.01 EUR is refused
    And the merchant can still return 6.00 EUR

  @callbacks
  Scenario: The merchant is called back about the chargeback
    Given an approved sale of 10.00 EUR
    When the issuer charges back 10.00 EUR of the order
    Then the gateway calls the merchant back about the chargeback with a signed "approved"
