"""The environment variables that override a profile's settings (``toolkit.config`` reads them).

A module of its own, without imports, so that ``gatekit --help`` can name them without loading
the profiles (and with them cryptography and the masking rules).
"""

ENV_VARS = {
    "base_url": "GATEWAY_BASE_URL",
    "endpoint_id": "GATEWAY_ENDPOINT_ID",
    "endpoint_group_id": "GATEWAY_ENDPOINT_GROUP_ID",
    "login": "GATEWAY_LOGIN",
    "control_key": "GATEWAY_CONTROL_KEY",
    "private_key_file": "GATEWAY_PRIVATE_KEY_FILE",
    "private_key_passphrase": "GATEWAY_PRIVATE_KEY_PASSPHRASE",
    "callback_url": "GATEWAY_CALLBACK_URL",
}
