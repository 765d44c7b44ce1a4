@exported
Feature: Scenarios recorded in the gatekit explorer
  Recorded in the gatekit explorer (toolkit.explorer); every step is a phrase of steps/.

  @create_card_ref @make_rebill @sale
  Scenario: Recorded in the explorer: sale, create card ref, make rebill
    Given a card that is approved
    When the merchant sends a sale of 15.00 EUR
    Then the order is approved
    When the merchant creates a card reference with v2
    Then the card information shows the holder, BIN, last four digits and expiry of the card
    When the merchant rebills an amount that is approved
    Then the order is approved
