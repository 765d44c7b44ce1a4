"""What a recording keeps of card data: the masking of the reports, with one exception.

A record is masked at birth (``toolkit.exchange``, ``toolkit.payer.visits``, ``toolkit.callbacks``): a card
number is its BIN and last four digits, a CVV2 is ``***``, card numbers in free text are masked, keys never
appear (the merchant's control key is never sent).  The exception: a CVV2 that is one of the public sandbox
test values (the outcome table's: ``123``, ``321``, ``116``...) is kept, because it chooses the outcome and a
replay (``gatekit drift``) must choose the same: a record carries those values apart (``outcome_values``), and
the serializer puts them back.  Controls and OAuth signatures are kept: they prove what was sent, and they are
not secrets.  What the payer types on an issuer's page (a password, a code) is kept out, and so are cookies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from toolkit.outcome_values import TEST_CVV2

# Fields the payer types on an issuer's page: kept out (a recording says whether the right one was typed).
_TYPED_SECRET = re.compile(r"(?i)^(password|passwd|pwd|pass|otp|pin|passcode|code|challengedataentry)$")
# Headers that never go into a recording (a session cookie of the payer's browser, a proxy's credentials).
DROPPED_HEADERS = frozenset({"cookie", "set-cookie", "proxy-authorization"})


def recorded_fields(pairs: Iterable[tuple[str, str]], outcome_values: Mapping[str, str]) -> list[tuple[str, str]]:
    """A record's (masked) form fields as a recording keeps them: a public test value put back as it was sent
    (``outcome_values``), a secret the payer typed as ``***``."""
    kept = []
    for name, value in pairs:
        if name in outcome_values:
            value = outcome_values[name]
        elif _TYPED_SECRET.match(name) and value:
            value = "***"
        kept.append((name, value))
    return kept


def recorded_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """A record's (masked) header fields as a recording keeps them: cookies and a proxy's credentials dropped."""
    return [(name, value) for name, value in headers if name.lower() not in DROPPED_HEADERS]


__all__ = ["DROPPED_HEADERS", "TEST_CVV2", "recorded_fields", "recorded_headers"]
