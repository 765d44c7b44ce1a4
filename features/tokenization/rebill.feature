@tokenization
Feature: Tokenize and rebill
  The merchant keeps a card reference from an approved sale and charges it later while the
  cardholder is away.

  Background:
    Given an approved sale of 15.00 EUR

  @create_card_ref @create_card_ref_v4 @get_card_info
  Scenario Outline: The card of a sale is tokenized (<version>)
    When the merchant creates a card reference with <version>
    Then the card information shows the holder, BIN, last four digits and expiry of the card

    Examples:
      | version |
      | v2      |
      | v4      |

  @make_rebill
  Scenario: A rebill is approved
    Given the merchant has a card reference of the sale
    When the merchant rebills an amount that is approved
    Then the order is approved

  @make_rebill
  Scenario: A rebill is declined
    Given the merchant has a card reference of the sale
    When the merchant rebills an amount that gives insufficient funds
    Then the order is declined with "Insufficient funds"

  @make_rebill
  Scenario: A rebill tries the next amount when one is declined
    Given the merchant has a card reference of the sale
    When the merchant rebills an amount that gives insufficient funds, then 5.00 EUR
    Then the order is approved
    And the rebill charged 5.00 EUR

  @make_rebill
  Scenario: A rebill with an unknown card reference is refused
    When the merchant tries to rebill card reference 999999999
    Then the gateway refuses the request saying "cardrefid: 999999999 is not a card reference of this merchant"

  @make_rebill_sale
  Scenario: A stored card is charged by make-rebill-sale
    Given the merchant has a card reference of the sale
    When the merchant rebills an amount that is approved with make-rebill-sale
    Then the order is approved

  @make_rebill_preauth @capture
  Scenario: A stored card is held by make-rebill-preauth, then captured in part
    Given the merchant has a card reference of the sale
    When the merchant holds 20.00 EUR on the stored card with make-rebill-preauth
    Then the hold is approved as a preauth of 20.00 EUR
    When the merchant captures 8.00 EUR of the order
    Then the capture is approved for 8.00 EUR

  @transfer_by_ref
  Scenario: Money moves from one stored card to another by reference
    Given the merchant has a card reference of the sale
    And the merchant has a card reference of another approved sale
    When the merchant transfers 5.00 EUR from the stored card of the sale to the other one
    Then the order is approved

  @make_rebill @simulator @strict
  Scenario: A stored card whose expiry has passed is declined like a direct sale
    Given the merchant has a card reference of a card that expires this month
    When 62 days pass on the gateway's clock
    And the merchant rebills an amount that is approved
    Then the order is declined with "Expired card"
