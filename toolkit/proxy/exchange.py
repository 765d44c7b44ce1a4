"""``Exchange``: one request and its answer as the proxy saw them, and the masked line it prints for them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from toolkit.masking import mask_text
from toolkit.proxy.bodies import Body
from toolkit.proxy.checks import Answer, Check
from toolkit.proxy.routes import Route
from toolkit.terminal import printable

PROBLEM, NOTE = "  ! ", "  - "


@dataclass
class Exchange:
    """One exchange, for its line and its recording.  ``status`` None: no answer (``error`` says why); a status
    with an ``error``: an answer cut short, or refused by the proxy itself.

    ``order``: the recording it belongs to; ``headers``: those forwarded (re-signed when it had to be);
    ``signed_with``: how, when not with the merchant's key; ``body``: what is kept of the answer's body;
    ``sent_text``: a request body that is no form (JSON, text: the gateway reads no ``pairs`` from it), as text."""

    method: str
    path: str
    route: Route | None
    pairs: list[tuple[str, str]]
    checks: list[Check] = field(default_factory=list)
    status: int | None = None
    answer: Answer | None = None
    elapsed: float = 0.0
    error: str = ""
    order: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    signed_with: str = ""
    body: Body | None = None
    sent_text: str = ""

    @property
    def problems(self) -> list[Check]:
        return [check for check in self.checks if check.problem]

    def line(self, said: set[str] | None = None) -> str:
        """``12:00:01  sale 1001  200 async-response processing  38 ms  ok`` and one line per finding, masked.

        ``said``: the notes printed before; a note already in it is not printed again (it is added otherwise)."""
        what = f"{self.route.operation.name} {self.route.path_id}" if self.route else f"{self.method} {self.path}"
        if self.route and self.route.by_group:
            what = f"{self.route.operation.name} group {self.route.path_id}"
        if self.status is None:
            outcome = f"no answer: {self.error}"
        else:
            summary = self.answer.summary if self.answer else ""
            outcome = " ".join(part for part in (str(self.status), summary) if part)
            outcome += f" ({self.error})" if self.error else ""
        verdict = f"{len(self.problems)} problem{'s' * (len(self.problems) != 1)}" if self.problems else "ok"
        lines = [f"{datetime.now():%H:%M:%S}  {what}  {outcome.strip()}  {self.elapsed * 1000:.0f} ms  {verdict}"]
        for check in self.checks:
            if not check.problem and said is not None:
                if check.text in said:
                    continue
                said.add(check.text)
            lines.append((PROBLEM if check.problem else NOTE) + str(check))
        return "\n".join(printable(mask_text(line)) for line in lines)  # (each line: a path may carry \r\n)


__all__ = ["NOTE", "PROBLEM", "Exchange"]
