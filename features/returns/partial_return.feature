@returns @return
Feature: Partial return
  The merchant gives money back in parts, never more than was charged; a return of a preauth
  releases the hold.

  Scenario: Two partial returns and then the rest
    Given an approved sale of 10.00 EUR
    When the merchant returns 3.00 EUR
    And the merchant returns 2.50 EUR
    And the merchant returns the rest
    Then every return is approved
    And 10.00 EUR has been returned in total
    And a further return of 0.01 EUR is refused

  Scenario: A return above the remaining amount is refused
    Given an approved sale of 10.00 EUR
    And the merchant has returned 6.00 EUR
    When the merchant tries to return 5.00 EUR
    Then the gateway refuses the request saying "exceeds the 4.00 EUR still available"

  Scenario: A full reversal without an amount
    Given an approved sale of 10.00 EUR
    When the merchant returns the rest
    Then every return is approved
    And 10.00 EUR has been returned in total

  @preauth @capture
  Scenario: A return of a preauth releases the hold
    Given an approved preauth of 20.00 EUR
    When the merchant returns the rest
    Then every return is approved
    And the return is recorded as a reversal
    And a capture of 1.00 EUR is refused
