@returns @return
Feature: Partial return
  The merchant gives money back in parts, never more than was charged: a reversal of a sale or of
  what was captured; a return of a preauth with nothing captured cancels the hold.

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
  Scenario: A return of a preauth with nothing captured cancels the hold
    Given an approved preauth of 20.00 EUR
    When the merchant returns the rest
    Then every return is approved
    And the return is recorded as a cancel
    And a capture of 1.00 EUR is refused

  @preauth @capture
  Scenario: What was captured is reversed
    Given an approved preauth of 20.00 EUR
    And the merchant has captured 12.00 EUR
    When the merchant returns the rest
    Then every return is approved
    And the return is recorded as a reversal
    And 12.00 EUR has been returned in total

  @status
  Scenario: The order's status and the status of one request
    Given an approved sale of 10.00 EUR
    And the merchant has returned 3.00 EUR
    When the merchant asks for the status of the order
    Then the order's latest transaction is an approved reversal of 3.00 EUR
    And the status of the sale request, by its serial number, is an approved sale of 10.00 EUR
