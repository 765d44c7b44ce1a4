@preauth
Feature: Preauth, capture and void
  Funds are reserved by a preauth, then captured in full or in part, or voided before settlement.

  @capture
  Scenario: A preauth is captured in full
    Given an approved preauth of 30.00 EUR
    When the merchant captures the rest
    Then the capture is approved for 30.00 EUR

  @capture
  Scenario: A preauth is captured in part, twice
    Given an approved preauth of 30.00 EUR
    When the merchant captures 10.00 EUR
    And the merchant captures 15.00 EUR
    Then every capture is approved
    And a capture of 5.01 EUR is refused

  @capture
  Scenario: A capture above the authorized amount is refused
    Given an approved preauth of 30.00 EUR
    When the merchant tries to capture 30.01 EUR
    Then the gateway refuses the request saying "exceeds the 30.00 EUR still available"

  @void
  Scenario: A preauth is voided
    Given an approved preauth of 30.00 EUR
    When the merchant voids the order
    Then the void is approved
    And a capture of 1.00 EUR is refused

  @void @sale
  Scenario: A sale is voided before settlement
    Given an approved sale of 8.00 EUR
    When the merchant voids the order
    Then the void is approved

  @void @simulator
  Scenario: A void after settlement is refused
    Given an approved sale of 8.00 EUR
    And the gateway has settled the sale
    When the merchant tries to void the order
    Then the gateway refuses the request saying "already settled"

  @void
  Scenario: A void does not take an amount
    Given an approved preauth of 30.00 EUR
    When the merchant tries to void 10.00 EUR of the order
    Then the gateway refuses the request saying "void does not support a partial amount"
