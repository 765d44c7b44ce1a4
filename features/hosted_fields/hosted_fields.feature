@hosted_fields @sale_v4 @status_v4
Feature: Hosted Fields checkout
  The merchant keeps its own checkout page; only the card number, expiry and CVV are the gateway's iframes.  For
  every load of the page the merchant's server asks the gateway for a single-use ephemeral ticket; the gateway's
  SDK sends the card typed into its iframes to the gateway, which hands the page a one-time hosted fields token;
  the merchant's server charges the token with a v4 sale signed with OAuth RSA-SHA256 and follows the order with
  the v4 status.  When the issuer asks for 3-D Secure, the status sends the payer there once (redirect-to), and
  the payer's browser comes back to the sale's redirect_url with status, orderid, merchant_order and a control
  that the merchant verifies before it asks for the status again.

  Background:
    Given the merchant's back end is listening for callbacks and payer redirects

  Scenario: The payer pays with an approved card typed into the Hosted Fields
    Given a card that is approved
    When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket
    And the payer types the card into the Hosted Fields
    And the merchant charges the hosted fields token
    Then the order is approved
    And the status shows the last four digits of the card the payer typed

  Scenario: The issuer declines the card typed into the Hosted Fields
    Given a card that is declined
    When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket
    And the payer types the card into the Hosted Fields
    And the merchant charges the hosted fields token
    Then the order is declined with "Do not honor"

  Scenario: The payer passes the 3-D Secure challenge of a Hosted Fields sale
    Given a card that requires a 3-D Secure challenge
    When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket
    And the payer types the card into the Hosted Fields
    And the merchant charges the hosted fields token
    And the payer's browser follows redirect-to and answers the challenge with the right password
    Then the order is approved
    And the payer's browser posts a signed "approved" back to the merchant's redirect_url

  Scenario: The payer fails the 3-D Secure challenge of a Hosted Fields sale
    Given a card that requires a 3-D Secure challenge
    When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket
    And the payer types the card into the Hosted Fields
    And the merchant charges the hosted fields token
    And the payer's browser follows redirect-to and answers the challenge with a wrong password
    Then the order is declined with "3-D Secure authentication failed"
    And the payer's browser posts a signed "declined" back to the merchant's redirect_url

  @create_ephemeral_ticket
  Scenario: An ephemeral ticket tokenizes one card only
    Given a card that is approved
    When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket
    And the payer types the card into the Hosted Fields
    And the payer types the card into the Hosted Fields again on the same page
    Then the gateway refuses the card typed into the Hosted Fields with code 4003

  Scenario: A hosted fields token pays for one sale only
    Given a card that is approved
    When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket
    And the payer types the card into the Hosted Fields
    And the merchant charges the hosted fields token
    Then the order is approved
    When the merchant charges the same hosted fields token for another order
    Then the gateway refuses the request saying "already spent"

  @browser
  Scenario: The payer types the card into the gateway's iframes on the merchant's checkout page in a real browser
    Given a card that requires a 3-D Secure challenge
    When the merchant's checkout page for 10.42 EUR gets a fresh ephemeral ticket
    And the payer types the card into the Hosted Fields in a real browser
    And the merchant charges the hosted fields token
    And the payer's browser follows redirect-to and answers the challenge in a real browser with the right password
    Then the order is approved
    And the payer's browser posts a signed "approved" back to the merchant's redirect_url
    And the checkout page kept to its Content-Security-Policy
