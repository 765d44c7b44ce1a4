"""What the proxy answers itself: a request it refuses (400, 413, 501...), a gateway that gave no answer (502) or
none in time (504), too many connections (503).

On the gateway's API paths (``.../api/...``) the answer is in the gateway's own form, an ``error`` with an
``error-message`` (JSON when the client asks for it, key=value otherwise), so that a client library reads it
as an error and shows its message; elsewhere it is plain text.  The HTTP status stays the proxy's, in both
forms (as the simulator's own 413 does).  Every message starts with ``gatekit proxy:`` and is masked.
"""

from __future__ import annotations

from toolkit.masking import mask_text
from toolkit.wire import LEGACY_TYPE, MEDIA_TYPE, asks_for_json, encode_json, encode_legacy

Headers = list[tuple[str, str]]
PLAIN_TYPE = "text/plain; charset=utf-8"


def refusal(message: str, *, path: str = "", accept: str = "") -> tuple[Headers, bytes]:
    """The headers and the body of the proxy's own answer saying ``message``, for a request to ``path``."""
    text = mask_text(f"gatekit proxy: {message}")
    if "/api/" in path.partition("?")[0]:
        fields = {"type": "error", "error-message": text}
        if asks_for_json(accept):
            return [("Content-Type", MEDIA_TYPE)], encode_json(fields).encode("utf-8")
        return [("Content-Type", LEGACY_TYPE)], encode_legacy(fields).encode("utf-8")
    return [("Content-Type", PLAIN_TYPE)], f"{text}\n".encode()


__all__ = ["refusal"]
