@exported
Feature: Scenarios recorded in the gatekit explorer
  Recorded in the gatekit explorer (toolkit.explorer); every step is a phrase of steps/.

  @return @sale
  Scenario: Recorded in the explorer: sale, return x3, return (refused)
    Given a card that is approved
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved
    When the merchant returns 3.00 EUR
    And the merchant returns 2.50 EUR
    And the merchant returns the rest
    Then every return is approved
    When the merchant tries to return 0.01 EUR
    Then the gateway refuses the request saying "return of 0.01 EUR exceeds the 0.00 EUR still available on orderid"
