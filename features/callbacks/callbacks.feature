@callbacks @sale
Feature: Server callbacks
  The gateway calls the merchant back with the final outcome, signed; the merchant confirms it
  with status and recognises a repeated callback.

  Scenario: The callback is delivered, signed and matches the status
    Given a card that is approved
    When the merchant sends a sale of 10.42 EUR
    Then the gateway calls the merchant back with a signed "approved"
    And the callback matches the status

  @simulator
  Scenario: The callback is retried after the merchant fails to take it
    Given the merchant's back end will fail the next 2 callbacks
    And a card that is approved
    When the merchant sends a sale of 10.42 EUR
    And the gateway retries the callback until the merchant takes it
    Then the gateway called back 3 times
    And the last callback was taken

  @simulator
  Scenario: A duplicated callback is recognised
    Given the gateway will send the next callback twice
    And a card that is approved
    When the merchant sends a sale of 10.42 EUR
    Then the gateway calls the merchant back with a signed "approved"
    And the merchant recognises the second callback as a duplicate

  @preauth @capture
  Scenario: A later transaction of the order is called back at its notify_url
    Given an approved preauth of 10.00 EUR
    When the merchant captures 4.00 EUR of the order
    Then the gateway calls the merchant back about the capture with a signed "approved"
    And the callback of the capture matches its status
