@payouts
Feature: Two-step payout
  The merchant pays money out: v4 registers the payout with a check and executes it with pay;
  v2 pays out in one step, signed with HMAC-SHA1.

  @payout_check @payout_pay
  Scenario: A payout is checked, then paid
    When the merchant checks a payout of 25.00 EUR to an approved card
    Then the payout check is approved
    When the merchant pays the checked payout
    Then the order is approved

  @payout_pay
  Scenario: A pay without a check is refused
    Given an approved sale of 5.00 EUR
    When the merchant tries to pay out that order
    Then the gateway refuses the request saying "payout-pay needs the orderid of a payout-check"

  @payout_check @payout_pay
  Scenario: A payout is paid only once
    When the merchant checks a payout of 12.00 EUR to an approved card
    And the merchant pays the checked payout
    And the merchant tries to pay the checked payout again
    Then the gateway refuses the request saying "was already paid"

  @payout_check @simulator
  Scenario: A payout above the balance is declined
    When the merchant checks a payout of 10000.42 EUR to an approved card
    Then the payout check is declined with "exceeds the balance"

  @payout
  Scenario: A v2 payout signed with HMAC-SHA1
    When the merchant sends a v2 payout of 7.00 EUR to an approved card
    Then the order is approved

  @payout
  Scenario: A v2 payout declined for insufficient funds
    When the merchant sends a v2 payout of an amount that gives insufficient funds
    Then the order is declined with "Insufficient funds"

  @payout_form
  Scenario: The payee enters the destination card on the payout form
    When the merchant opens a payout form for 9.00 EUR
    And the payer enters an approved card on the payment page
    Then the payer's redirect to the merchant is signed by the gateway
    And the order is approved

  @payout_v4
  Scenario: A one-step v4 payout to a card
    When the merchant sends a one-step v4 payout of 7.00 EUR to an approved card
    Then the order is approved

  @transfer_by_ref_v4
  Scenario: A deposit to a card by the v4 transfer by reference
    When the merchant deposits 6.00 EUR to an approved card
    Then the order is approved

  @transfer_by_ref_v4 @simulator
  Scenario: A deposit above the payout balance is declined
    When the merchant deposits 10000.42 EUR to an approved card
    Then the order is declined with "Insufficient funds"
