@shop
Feature: The shop's checkout
  gatekit's phrases drive the gateway and the payer; "the shop keeps ..." is the shop's own.

  Scenario: A paid order is refunded in part
    Given an approved sale of 20.00 EUR
    When the merchant returns 5.00 EUR
    Then every return is approved
    And the shop keeps 15.00 EUR of the order

  Scenario: A customer passes the 3-D Secure challenge
    Given the merchant's back end is listening for callbacks and payer redirects
    And a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 12.00 EUR
    And the payer's browser completes the 3-D Secure method step
    And the merchant reports the method step as completed
    And the payer answers the challenge with the right password
    And the merchant uploads the challenge result the payer brought back
    Then the order is approved
    And the shop keeps 12.00 EUR of the order
