"""What a recording keeps of card data: the masking of the reports, with one exception.

A card number is its BIN and last four digits, a CVV2 is ``***``, card numbers in free text are masked, keys
never appear (the merchant's control key is never sent).  The exception: a CVV2 that is one of the public
sandbox test values (the outcome table's: ``123``, ``321``, ``116``...) is kept, because it chooses the outcome
and a replay (``gatekit drift``) must choose the same.  Controls and OAuth signatures are kept: they prove what
was sent, and they are not secrets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from toolkit.masking import is_cvv_name, mask_fields, mask_text
from toolkit.testdata.outcomes import CARD_OUTCOMES, SIMULATOR_OUTCOMES

TEST_CVV2 = frozenset(outcome.cvv2 for outcome in (*CARD_OUTCOMES, *SIMULATOR_OUTCOMES))
# Fields the payer types on an issuer's page: kept out (a recording says whether the right one was typed).
_TYPED_SECRET = re.compile(r"(?i)^(password|passwd|pwd|pass|otp|pin|passcode|code|challengedataentry)$")
# Headers that never go into a recording (a session cookie of the payer's browser, a proxy's credentials).
DROPPED_HEADERS = frozenset({"cookie", "set-cookie", "proxy-authorization"})


def record_fields(pairs: Iterable[tuple[str, str]] | Mapping[str, str]) -> list[tuple[str, str]]:
    """Form fields as a recording keeps them: masked as in the reports, a test CVV2 kept as sent."""
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
    masked = mask_fields(items)
    kept = []
    for name, value in items:
        shown = masked.get(name, "")
        if is_cvv_name(name) and value.strip() in TEST_CVV2:
            shown = value.strip()
        elif _TYPED_SECRET.match(name) and value:
            shown = "***"
        kept.append((name, shown))
    return kept


def record_headers(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Headers as a recording keeps them: cookies dropped, card data in any value masked, Authorization kept."""
    return [(name, mask_text(str(value))) for name, value in headers.items() if name.lower() not in DROPPED_HEADERS]


def record_text(text: str) -> str:
    """A body or a URL: card numbers masked wherever they are."""
    return mask_text(text)
