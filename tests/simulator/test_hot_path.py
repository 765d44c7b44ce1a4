"""The shortcuts of the gateway's hot path give what the plain ways give (issue 12).

- ``limits._split_form`` unquotes a whole body at once when it can: the pairs are
  ``urllib.parse.parse_qsl``'s, for bodies made of escapes, separators and multi-byte characters;
- ``render.new_serial`` writes a version 4 UUID as ``str(uuid.uuid4())`` does.

(``Engine.latest_of``, status in one statement, is held to the order's latest transaction by
``test_api_followups.py::test_the_order_status_is_its_latest_transaction_and_a_request_keeps_its_own``;
``mask_fields`` to ``mask_value`` of each field by ``tests/test_masking_property.py``.)
"""

from __future__ import annotations

import uuid
from urllib.parse import parse_qsl

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.simulator import render
from toolkit.simulator.limits import _split_form

# Pieces of form bodies: separators, their escapes (%26, %3D), escapes of multi-byte characters cut anywhere,
# plus signs, a lone percent sign, raw non-ASCII text.
PIECES = ["a", "b=", "=", "&", "+", "%", "%2", "%26", "%3D", "%3d", "%C3", "%A9", "%C3%A9", "%E2%82%AC", "%25", "%2B"]
PIECES += ["%FF", "%41", " ", "é", "€", "x%20y", ""]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_split_form_gives_the_pairs_parse_qsl_gives(pieces: list[str]) -> None:
    body = "".join(pieces)
    assert _split_form(body) == parse_qsl(body, keep_blank_values=True)


def test_split_form_does_not_unquote_a_separator_into_the_pairs() -> None:
    assert _split_form("a=1%262&b=x%3Dy+z&c=%40") == [("a", "1&2"), ("b", "x=y z"), ("c", "@")]
    assert _split_form("a=x+y&b=j%40example.com") == [("a", "x y"), ("b", "j@example.com")]


def test_serial_numbers_are_version_4_uuids() -> None:
    serials = {render.new_serial() for _ in range(2000)}
    assert len(serials) == 2000
    for serial in serials:
        parsed = uuid.UUID(serial)
        assert str(parsed) == serial and parsed.version == 4 and parsed.variant == uuid.RFC_4122
