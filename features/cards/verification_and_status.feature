@cards
Feature: Verification, recurring payments, status and the sandbox outcomes
  The card data chooses the outcome in the sandbox; every outcome is reported the same way.

  @account_verification
  Scenario: A card account is verified
    Given a card that is approved
    When the merchant verifies the card account
    Then the order is approved

  @create_recurring_payment
  Scenario: A recurring payment is created
    Given an approved sale of 4.00 EUR
    And the merchant has a card reference of the sale
    When the merchant creates a monthly recurring payment of 9.99 EUR
    Then the recurring payment has an id

  @create_recurring_payment @simulator
  Scenario: The gateway charges a recurring payment when it is due
    Given an approved sale of 4.00 EUR
    And the merchant has a card reference of the sale
    When the merchant creates a daily recurring payment of 9.99 EUR
    And 1 day passes on the gateway's clock
    Then the recurring payment has been charged twice

  @status
  Scenario: The status is found by the merchant's order id alone
    Given an approved sale of 6.00 EUR
    When the merchant asks for the status by its own order id only
    Then the status is approved for 6.00 EUR

  @status
  Scenario: The status is polled at the endpoint group's address
    Given an approved sale of 6.00 EUR
    When the merchant asks for the status of the order by its endpoint group
    Then the status is approved for 6.00 EUR

  @status @sale
  Scenario: The merchant sees a sale processing, then waits for its outcome
    Given a card that is approved
    When the merchant sends a sale of 10.42 EUR
    Then the merchant first sees the order processing
    And the order is approved

  @declines @sale
  Scenario Outline: A card that is <outcome> is declined
    Given a card that is <outcome>
    When the merchant sends a sale of 10.42 EUR
    Then the order is declined with "<message>"

    Examples:
      | outcome            | message                                 |
      | expired            | Expired card                            |
      | insufficient-funds | Insufficient funds                      |
      | not-permitted      | Transaction not permitted to cardholder |
      | stolen             | Pick up card, stolen                    |
      | declined           | Do not honor                            |

  @sale
  Scenario: The acquirer cannot be reached
    Given a card that is unknown
    When the merchant sends a sale of 10.42 EUR
    Then the status is unknown
