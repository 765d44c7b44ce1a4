"""What the signing debugger reports: a ``Diagnosis`` with the ``Finding`` of each part that differs.

Values are masked when shown (card data); a control key is never part of a diagnosis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from toolkit.display.html import esc, page, section, table
from toolkit.display.views import Note
from toolkit.masking import mask_text
from toolkit.wire import decode_form

Pairs = list[tuple[str, str]]


@dataclass(frozen=True)
class Finding:
    """One part that differs from what the gateway expects: what it should be, what was used, and why."""

    part: str
    expected: str
    found: str
    why: str

    def __str__(self) -> str:
        return mask_text(f"{self.part}: expected {self.expected!r}, found {self.found!r} — {self.why}")


@dataclass(frozen=True)
class Diagnosis:
    """The verdict on one signed request; ``findings`` name what differs (empty when it verifies)."""

    operation: str
    scheme: str
    ok: bool
    verdict: str
    formula: str = ""
    parts: tuple[tuple[str, str], ...] = ()
    expected: str = ""
    sent: str = ""
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = field(default=())
    compared: str = "control"  # what ``expected`` and ``sent`` are: a control, a signature, a SHA-256 digest
    base_string: str = ""  # OAuth: the base string the gateway computes (masked)

    @property
    def mismatch(self) -> Finding | None:
        """The first finding: the part that differs."""
        return self.findings[0] if self.findings else None

    @property
    def sent_label(self) -> str:
        """``sent control``, ``sent oauth_signature``, or ``SHA-256 digest in the signature``."""
        return f"{self.compared} in the signature" if "digest" in self.compared else f"sent {self.compared}"

    def __repr__(self) -> str:
        return mask_text(f"Diagnosis({self.operation}, {self.scheme}: {self.verdict})")

    def __str__(self) -> str:
        lines = [f"{self.operation} ({self.scheme}): {self.verdict}"]
        if self.formula:
            lines.append(f"expected: {self.formula}")
        lines += [f"  {name} = {value}" for name, value in self.parts]
        if self.base_string:
            lines.append(f"base string: {self.base_string}")
        if self.expected:
            lines.append(f"expected {self.compared}: {self.expected}")
        if self.sent:
            lines.append(f"{self.sent_label}: {self.sent}")
        lines += [f"- {finding}" for finding in self.findings]
        lines += [f"note: {note}" for note in self.notes]
        return mask_text("\n".join(lines))

    def _repr_html_(self) -> str:
        verdict = Note(self.verdict, bad=not self.ok)._repr_html_()
        parts = [verdict]
        if self.findings:
            rows = [(f.part, f.expected, f.found, f.why) for f in self.findings]
            parts.append(section("what differs", table(rows, ("part", "the gateway expects", "was used", "why"))))
        base = [("base string", self.base_string)] if self.base_string else []
        rows2 = [*self.parts, *base, (f"expected {self.compared}", self.expected), (self.sent_label, self.sent)]
        parts.append(section(f"what the gateway computes: {self.formula}", table(rows2)))
        if self.notes:
            parts.append(section("notes", "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in self.notes) + "</ul>"))
        return page(*parts)


def body_pairs(body: str | bytes | Mapping[str, str] | Sequence[tuple[str, str]]) -> Pairs:
    """A pasted form body (``a=1&b=2``) or fields, as (name, value) pairs in the order sent."""
    if isinstance(body, (str, bytes)):
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        return decode_form(text.strip())
    if isinstance(body, Mapping):
        return [(str(k), str(v)) for k, v in body.items()]
    return [(str(k), str(v)) for k, v in body]


def path_id(url: str) -> tuple[str, bool] | None:
    """(id, by_group) from an operation URL ``.../sale/1001`` or ``.../sale/group/2001``."""
    segments = [s for s in urlsplit(url).path.split("/") if s]
    if len(segments) < 2:
        return None
    return segments[-1], segments[-2] == "group"
