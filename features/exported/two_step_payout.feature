@exported
Feature: Scenarios recorded in the gatekit explorer
  Recorded in the gatekit explorer (toolkit.explorer); every step is a phrase of steps/.

  @payout_check @payout_pay
  Scenario: Recorded in the explorer: payout check, payout pay, payout pay (refused)
    When the merchant checks a payout of 25.00 EUR to an approved card
    Then the payout check is approved
    When the merchant pays the checked payout
    Then the order is approved
    When the merchant tries to pay the checked payout again
    Then the gateway refuses the request saying "this payout-check was already paid"
