@threeds @sale
Feature: 3-D Secure sale
  A cardholder pays with a card whose issuer authenticates the payer with 3-D Secure.
  Two roads, chosen by what the merchant does. The gateway runs 3-D Secure itself when the merchant
  shows the payer the page of the status and uploads nothing (what the family's shop plugins do): the
  page goes through the method step by itself, the payer answers the issuer's challenge, and the
  gateway sends the payer back with the final outcome. A merchant that runs the steps itself reports
  the method step, carries the payer's result to the upload operations, and confirms the outcome by status.

  Background:
    Given the merchant's back end is listening for callbacks and payer redirects

  @gateway_run
  Scenario: The gateway runs 3-D Secure for a shop that uploads nothing: the payer passes the challenge
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the merchant shows the 3-D Secure page of the status to the payer's browser
    And the payer answers the challenge with the right password
    Then the order is approved
    And the payer comes back to the merchant with a signed "approved"

  @gateway_run
  Scenario: The gateway runs 3-D Secure for a shop that uploads nothing: the payer fails the challenge
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the merchant shows the 3-D Secure page of the status to the payer's browser
    And the payer answers the challenge with a wrong password
    Then the order is declined with "3-D Secure authentication failed"
    And the payer comes back to the merchant with a signed "declined"

  @gateway_run @browser
  Scenario: The gateway runs 3-D Secure for a shop that uploads nothing, in a real browser
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the merchant shows the 3-D Secure page of the status in a real browser, where the payer answers the challenge with the right password
    Then the order is approved
    And the payer comes back to the merchant with a signed "approved"

  @gateway_run @callbacks
  Scenario: The gateway calls back a 3-D Secure sale it ran itself
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the merchant shows the 3-D Secure page of the status to the payer's browser
    And the payer answers the challenge with the right password
    Then the gateway calls the merchant back with a signed "approved"

  @gateway_run @simulator
  Scenario: The gateway runs a frictionless 3-D Secure 2 approval without a challenge
    Given a card that passes 3-D Secure without a challenge
    When the merchant sends a sale of 10.42 EUR
    And the merchant shows the 3-D Secure page of the status to the payer's browser
    Then the order is approved
    And the payer comes back to the merchant with a signed "approved"

  @gateway_run
  Scenario: The gateway runs 3-D Secure 1.0.2 for a shop that uploads nothing
    Given a 3-D Secure 1.0.2 test card
    When the merchant sends a sale of 1.00 EUR
    And the merchant shows the 3-D Secure page of the status to the payer's browser
    And the payer answers the challenge with the right password
    Then the order is approved
    And the payer comes back to the merchant with a signed "approved"

  @upload_method_url_result @upload_cres_result
  Scenario: The payer passes the 3-D Secure 2 challenge
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the payer's browser completes the 3-D Secure method step
    And the merchant reports the method step as completed
    And the payer answers the challenge with the right password
    And the merchant uploads the challenge result the payer brought back
    Then the order is approved
    And the payer's redirect to the merchant is signed by the gateway

  @upload_method_url_result @upload_cres_result
  Scenario: The payer fails the 3-D Secure 2 challenge
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the payer's browser completes the 3-D Secure method step
    And the merchant reports the method step as completed
    And the payer answers the challenge with a wrong password
    And the merchant uploads the challenge result the payer brought back
    Then the order is declined with "3-D Secure authentication failed"

  @browser @upload_method_url_result @upload_cres_result
  Scenario: The payer passes the 3-D Secure 2 challenge in a real browser
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the payer's browser completes the 3-D Secure method step
    And the merchant reports the method step as completed
    And the payer answers the challenge in a real browser with the right password
    And the merchant uploads the challenge result the payer brought back
    Then the order is approved
    And the payer's redirect to the merchant is signed by the gateway

  Scenario: A card that is not enrolled is approved at once
    Given a card that is not enrolled in 3-D Secure
    When the merchant sends a sale of 10.42 EUR
    Then the order is approved
    And the payer was never asked to act

  @upload_method_url_result
  Scenario Outline: The merchant reports a method step that <situation>
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the merchant reports the method step as <reported>
    Then the payer is sent to the 3-D Secure challenge
    And the status shows the method step indicator "<indicator>"

    Examples:
      | situation                          | reported  | indicator |
      | did not complete within 10 seconds | timed out | N         |
      | the issuer does not offer          | absent    | U         |

  @simulator
  Scenario: The gateway times out a method step the merchant never reports
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the payer's browser completes the 3-D Secure method step
    And 11 seconds pass on the gateway's clock
    Then the payer is sent to the 3-D Secure challenge
    And the status shows the method step indicator "N"

  @simulator @upload_method_url_result
  Scenario: 3-D Secure 2 approves without a challenge after the method step
    Given a card that passes 3-D Secure without a challenge
    When the merchant sends a sale of 10.42 EUR
    And the payer's browser completes the 3-D Secure method step
    And the merchant reports the method step as completed
    Then the order is approved
    And the status shows the method step indicator "Y"

  @simulator @upload_method_url_result
  Scenario: 3-D Secure 2 declines without a challenge after the method step
    Given a card that fails 3-D Secure without a challenge
    When the merchant sends a sale of 10.42 EUR
    And the payer's browser completes the 3-D Secure method step
    And the merchant reports the method step as completed
    Then the order is declined with "3-D Secure authentication declined"

  @simulator @callbacks @upload_method_url_result
  Scenario: The gateway declines a challenge the payer never answers, whether or not anyone asks
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.42 EUR
    And the merchant reports the method step as absent
    And 901 seconds pass on the gateway's clock
    Then the gateway calls the merchant back with a signed "declined"

  @upload_pares_result
  Scenario: 3-D Secure 1.0.2 authentication succeeds
    Given a 3-D Secure 1.0.2 test card
    When the merchant sends a sale of 1.00 EUR
    And the payer authenticates on the issuer's 3-D Secure 1.0.2 page
    And the merchant uploads the authentication result the payer brought back
    Then the order is approved
    And the payer's redirect to the merchant is signed by the gateway

  @upload_pares_result
  Scenario: 3-D Secure 1.0.2 authentication fails
    Given a 3-D Secure 1.0.2 test card
    When the merchant sends a sale of 1.02 EUR
    And the payer authenticates on the issuer's 3-D Secure 1.0.2 page
    And the merchant uploads the authentication result the payer brought back
    Then the order is declined with "3-D Secure authentication failed"
