"""The public test values that choose a sandbox's outcome, which a record keeps as sent beside its masked fields.

A record (``toolkit.exchange.Exchange``, the payer's ``Visit``) is masked at birth: a CVV2 is ``***`` in its
fields, as in every report.  A CVV2 that is one of the outcome table's (``123``, ``321``, ``116``...) is no
secret, though: it chooses the outcome, and a recording keeps it so that a replay (``gatekit drift``) chooses
the same.  ``outcome_values`` picks those values out of what was sent, before it is masked; a recording's
serializer puts them back, and nothing else shows them.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.masking import is_cvv_name
from toolkit.testdata.outcomes import CARD_OUTCOMES, SIMULATOR_OUTCOMES

TEST_CVV2 = frozenset(outcome.cvv2 for outcome in (*CARD_OUTCOMES, *SIMULATOR_OUTCOMES))


def outcome_values(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The fields of ``pairs`` (as sent) whose value is a public test CVV2, by name, stripped as a replay sends it."""
    return {name: str(value).strip() for name, value in pairs if is_cvv_name(name) and str(value).strip() in TEST_CVV2}
