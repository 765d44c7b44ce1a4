"""Hosted Fields from the merchant's side: what a checkout page that embeds the gateway's SDK is configured with.

A merchant's app that follows the family's Hosted Fields examples reads four addresses and keys from its settings:
``API_URL`` (the gateway's root with its prefix, no trailing slash: ``/api/v4/<command>/<ENDPOINT_ID>`` is appended),
``SDK_URL`` (the SDK script, on the gateway's own origin), the endpoint id and the merchant's login, control key and
RSA private key.  ``HostedFieldsGateway`` holds them for a gatekit simulator (``from_simulator``): the pytest
plugin's ``hosted_fields_simulator`` fixture hands it to a merchant's test, which starts its app with them.

``content_security_policy`` is the policy every example sends with its checkout page, built from the SDK's origin:
the SDK script, the card iframes and the SDK's tokenize call must all come from that origin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

SDK_PATH = "/sdk/hosted-fields/latest/index.js"  # under the gateway's root (the newest examples' address)
SDK_QUERY = "segment=paynet"
TOKENIZE_PATH = "/api/v4/tokenize/hosted-fields"  # the SDK's own call, on the SDK's origin
FIELD_TYPES = ("pan", "exp", "cvv")  # the card fields, as ``HostedFields.init`` names their types


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL (an origin as a browser writes it: no path, no trailing slash)."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"{url!r} is not an absolute URL")
    return f"{parts.scheme}://{parts.netloc}".lower()


def sdk_url_of(api_url: str) -> str:
    """``SDK_URL`` of the gateway whose ``API_URL`` is ``api_url``: the SDK script on the same host, outside the
    API's prefix (hosted-fields.md section 2: ``https://<gateway-host>/paynet`` and
    ``https://<gateway-host>/sdk/hosted-fields/latest/index.js?segment=paynet``)."""
    return f"{origin_of(api_url)}{SDK_PATH}?{SDK_QUERY}"


def content_security_policy(sdk_origin: str) -> str:
    """The Content-Security-Policy of the examples' checkout and result pages, for the SDK at ``sdk_origin``: scripts,
    frames and fetches from the page's own origin and the SDK's only; no inline script or style."""
    return (
        f"default-src 'none'; script-src 'self' {sdk_origin}; style-src 'self'; frame-src {sdk_origin}; "
        f"connect-src 'self' {sdk_origin}; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )


@dataclass(frozen=True)
class HostedFieldsGateway:
    """What a merchant's Hosted Fields app is configured with to take payments on this gateway.

    ``root_url`` is where the gateway serves the SDK, its card fields and the tokenize call (the simulator's root,
    outside ``/paynet``); ``api_url`` the ``API_URL`` of the examples.  The secrets are the simulator's demo
    merchant's, published with gatekit: never a production merchant's.
    """

    root_url: str
    api_url: str
    endpoint_id: str
    login: str
    control_key: str = field(repr=False)
    private_key_pem: bytes = field(repr=False)

    @classmethod
    def from_simulator(cls, server: object) -> HostedFieldsGateway:
        """The demo merchant of a running ``toolkit.simulator.SimulatorServer`` (its ``client_config``)."""
        from toolkit import demo

        config = server.client_config()  # type: ignore[attr-defined]
        return cls(
            root_url=server.root_url,  # type: ignore[attr-defined]
            api_url=config.base_url,
            endpoint_id=config.endpoint_id or demo.ENDPOINT_ID,
            login=config.login,
            control_key=config.control_key.reveal(),
            private_key_pem=demo.private_key_pem(),
        )

    @property
    def sdk_url(self) -> str:
        """``SDK_URL``: the SDK script a checkout page loads (``async``, from this origin only)."""
        return f"{self.root_url}{SDK_PATH}?{SDK_QUERY}"

    @property
    def sdk_origin(self) -> str:
        return origin_of(self.root_url)

    @property
    def tokenize_url(self) -> str:
        """Where the SDK posts the card typed into its iframes (from the merchant's page, with CORS)."""
        return self.root_url + TOKENIZE_PATH

    @property
    def content_security_policy(self) -> str:
        """The examples' policy for a checkout page that embeds this gateway's SDK."""
        return content_security_policy(self.sdk_origin)

    def environment(self) -> dict[str, str]:
        """The settings as the examples' ``.env`` names them (``PRIVATE_KEY`` the PEM text, PKCS#8)."""
        return {
            "API_URL": self.api_url,
            "SDK_URL": self.sdk_url,
            "ENDPOINT_ID": self.endpoint_id,
            "MERCHANT_LOGIN": self.login,
            "MERCHANT_CONTROL": self.control_key,
            "PRIVATE_KEY": self.private_key_pem.decode("ascii"),
        }
