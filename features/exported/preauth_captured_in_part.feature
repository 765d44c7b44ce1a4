@exported
Feature: Scenarios recorded in the gatekit explorer
  Recorded in the gatekit explorer (toolkit.explorer); every step is a phrase of steps/.

  @capture @preauth
  Scenario: Recorded in the explorer: preauth, capture x2, capture (refused)
    Given an approved preauth of 30.00 EUR
    When the merchant captures 10.00 EUR
    And the merchant captures 15.00 EUR
    Then every capture is approved
    When the merchant tries to capture 5.01 EUR
    Then the gateway refuses the request saying "capture of 5.01 EUR exceeds the 5.00 EUR still available on orderid"
