@exported
Feature: Scenarios recorded in the gatekit explorer
  Recorded in the gatekit explorer (toolkit.explorer); every step is a phrase of steps/.

  @return @sale @upload_cres_result @upload_method_url_result
  Scenario: Recorded in the explorer: sale with 3-D Secure, return
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the payer's browser completes the 3-D Secure method step
    And the merchant reports the method step as completed
    And the payer answers the challenge with the right password
    And the merchant uploads the challenge result the payer brought back
    Then the order is approved
    And the payer's redirect to the merchant is signed by the gateway
    When the merchant returns 4.00 EUR
    Then every return is approved
