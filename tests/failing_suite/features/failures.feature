Feature: A run that fails on purpose
  Each scenario fails in its own way, to show how the report sorts failures into categories
  (tests/test_certify_report.py and the report screenshots run it).

  Background:
    Given the merchant's back end is listening for callbacks and payer redirects

  @sale
  Scenario: A declined card where the merchant expects an approval
    Given a card that is declined
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved

  @sale
  Scenario: A sale signed with the wrong control key
    Given a card that is approved
    When the merchant sends a sale of 10.00 EUR signed with the wrong control key
    Then the order is approved

  @sale @simulator
  Scenario: The gateway fails to process the sale
    Given a card that is approved
    And the gateway will fail the next sale
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved

  @status
  Scenario: Nothing answers at the gateway's address
    When the merchant asks a gateway where nothing listens for a status

  @sale @threeds
  Scenario: The payer never answers the 3-D Secure challenge
    Given a card that requires a 3-D Secure challenge
    When the merchant sends a sale of 10.00 EUR
    Then the order is final within half a second

  @sale
  Scenario: An approved sale of another amount than expected
    Given an approved sale of 10.00 EUR
    Then the order's latest transaction is an approved sale of 11.00 EUR

  @sale_form
  Scenario: A page the payer cannot read
    When the merchant opens a sale-form for 12.00 EUR
    And the payer is sent to a page that is not the payment page and tries to pay there

  Scenario: A step whose own code is wrong
    Given a step whose own code is wrong

  @sale
  Scenario: An approved sale
    Given a card that is approved
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved

  @sale_form @browser
  Scenario: A payment page in a real browser
    When the merchant opens a sale-form for 12.00 EUR
    And the payer enters an approved card on the payment page in a real browser
    Then the order is approved
