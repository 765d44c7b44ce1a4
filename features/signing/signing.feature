@signing
Feature: Request signing
  The gateway refuses requests whose control checksum or OAuth signature is wrong, and says why.

  @sale
  Scenario: A wrong control checksum is refused
    Given a card that is approved
    When the merchant sends a sale of 10.42 EUR signed with a wrong control key
    Then the gateway refuses the request saying "control"

  @payout
  Scenario: A wrong OAuth signature is refused
    When the merchant sends a v2 payout signed with a wrong key
    Then the gateway refuses the signature saying "oauth_signature"

  @payout_check
  Scenario: A stale OAuth timestamp is refused
    When the merchant sends a payout check with a timestamp 10 minutes old
    Then the gateway refuses the signature saying "oauth_timestamp"

  @payout_check
  Scenario: A replayed OAuth nonce is refused
    When the merchant sends two payout checks with the same nonce
    Then the gateway refuses the signature saying "oauth_nonce"
