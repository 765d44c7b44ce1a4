@hosted_forms
Feature: Hosted payment pages
  The gateway collects the card on its own page; the payer comes back to the merchant with a
  signed redirect that the merchant confirms with status.

  Scenario Outline: The payer pays on the <form> page
    When the merchant opens a <form> for 12.00 EUR
    And the payer enters an approved card on the payment page
    Then the payer's redirect to the merchant is signed by the gateway
    And the order is approved

    @sale_form
    Examples: sale
      | form      |
      | sale-form |

    @preauth_form
    Examples: preauth
      | form         |
      | preauth-form |

    @payment_form
    Examples: payment
      | form         |
      | payment-form |

    @account_verification_form
    Examples: verification
      | form                      |
      | account-verification-form |

  @transfer_form
  Scenario: The payer sends money from one card to another on the transfer page
    When the merchant opens a transfer-form for 15.00 EUR
    And the payer enters an approved card and the card that receives the money on the transfer page
    Then the payer's redirect to the merchant is signed by the gateway
    And the order is approved
    And the order's latest transaction is an approved transfer of 15.00 EUR

  @transfer_form @browser
  Scenario: The transfer page in a real browser
    When the merchant opens a transfer-form for 15.00 EUR
    And the payer enters an approved card and the card that receives the money on the transfer page in a real browser
    Then the payer's redirect to the merchant is signed by the gateway
    And the order is approved
    And the order's latest transaction is an approved transfer of 15.00 EUR

  @sale_form
  Scenario: The payment page points out a mistyped card number
    When the merchant opens a sale-form for 12.00 EUR
    And the payer enters a card number that fails the Luhn check on the payment page
    Then the payment page shows an error for "credit_card_number"
    When the payer enters an approved card on the payment page
    Then the order is approved

  @sale_form
  Scenario: A 3-D Secure card on the payment page
    When the merchant opens a sale-form for 12.00 EUR
    And the payer enters a card that requires a 3-D Secure challenge on the payment page
    And the payer answers the challenge with the right password
    Then the payer's redirect to the merchant is signed by the gateway
    And the order is approved

  @sale_form @browser
  Scenario: A 3-D Secure card on the payment page in a real browser
    When the merchant opens a sale-form for 12.00 EUR
    And the payer enters a card that requires a 3-D Secure challenge on the payment page in a real browser
    And the payer answers the challenge in a real browser with the right password
    Then the payer's redirect to the merchant is signed by the gateway
    And the order is approved

  @sale_form @simulator @callbacks
  Scenario: A payment page the payer never submits expires
    When the merchant opens a sale-form for 12.00 EUR
    And 1801 seconds pass on the gateway's clock
    Then the gateway calls the merchant back with a signed "declined"
    And the payment page says it has expired
