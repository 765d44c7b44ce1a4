"""The scene of a scenario being written: steps so far, and the fixtures the steps will hold.

The suite's steps pass objects on with ``target_fixture``: ``card``, ``order``, ``check``,
``card_ref``.  ``Writer`` follows them as the steps will set them, so that an action is written only
when its step will act on the same order; Then steps are written from the final statuses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolkit.exporter.records import Action, Tracked
from toolkit.models import Status
from toolkit.testdata.outcomes import AMOUNT_RULES, CARD_OUTCOMES, CHALLENGE_FAILED, GENERIC_DECLINE

STABLE_MESSAGES = frozenset(
    [o.error_message for o in (*CARD_OUTCOMES, GENERIC_DECLINE, CHALLENGE_FAILED)]
    + [rule.error_message for rule in AMOUNT_RULES.values()]
)
# Ids change between runs: numbers of 5 digits or more (orderids, card references, balances above
# 9999), tokens that mix digits and letters (client_orderids, serial numbers); quotes end a phrase.
_VOLATILE = re.compile(r"\S*\d{5}\S*|\S*(?:\d\S*[A-Za-z]|[A-Za-z]\S*\d)\S*|\"")
GROUP_THEN = {
    "capture": "every capture is approved",
    "return": "every return is approved",
    "void": "the void is approved",
}


class ExportError(ValueError):
    """An action the suite's steps cannot express: the message names it and says why."""


def stable_text(message: str) -> str:
    """The words of a gateway message that do not change between runs (no ids, amounts or balances)."""
    known = [stable for stable in STABLE_MESSAGES if stable and message.startswith(stable)]
    if known:
        return max(known, key=len)
    pieces = [_trim(piece) for piece in _VOLATILE.split(message)]
    best = max(pieces, key=len, default="")
    if len(best) < 4:
        raise ExportError(f"the gateway's message {message!r} has no stable words to check in a Then step")
    return best


def _trim(piece: str) -> str:
    """Without separators or a bracket left open (or closed) at either end."""
    piece = piece.strip(" ,;:'")
    if piece.count("(") > piece.count(")"):
        piece = piece[: piece.rfind("(")].rstrip(" ,;:")
    if piece.count(")") > piece.count("("):
        piece = piece[piece.find(")") + 1 :].lstrip(" ,;:")
    return piece


@dataclass
class Writer:
    """The steps written so far and the fixtures the steps will hold at this point of the scenario."""

    callbacks: bool = False
    steps: list[tuple[str, str]] = field(default_factory=list)
    pending: list[tuple[str, Tracked | None]] = field(default_factory=list)
    order: Tracked | None = None
    check: Tracked | None = None
    card_ref: str = ""
    paid: set[int] = field(default_factory=set)
    challenged: set[int] = field(default_factory=set)
    methods: set[int] = field(default_factory=set)
    gateway_run: set[int] = field(default_factory=set)  # orders whose status page was shown (behaviour 12)
    # Hosted Fields: the checkout page of the scenario (its ticket, the outcome of the card typed, whether its steps
    # are written), the tokens charged, and the orders whose status sent the payer to 3-D Secure (redirect-to)
    page: dict[str, str] | None = None
    charged: set[str] = field(default_factory=set)
    redirected: set[int] = field(default_factory=set)

    def add(self, keyword: str, text: str) -> None:
        self.steps.append((keyword, text))

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        for kind, tracked in pending:
            if kind == "order" and tracked is not None:
                self._order_outcome(tracked)
            elif kind == "check" and tracked is not None:
                self._check_outcome(tracked)
            else:
                self.add("Then", GROUP_THEN[kind])

    def on_order(self, action: Action, tracked: Tracked | None) -> Tracked:
        """The step acts on the scenario's ``order``: refuse an action on another one."""
        if tracked is None or tracked is not self.order:
            current = f"order {self.order.orderid} ({self.order.operation})" if self.order else "no order yet"
            what = f"order {tracked.orderid}" if tracked else "no order"
            raise ExportError(
                f"{action.operation} acted on {what}, but the scenario's order at that point is {current}: "
                "the suite's steps act on the latest order (export from the action that created it)"
            )
        return tracked

    def _order_outcome(self, tracked: Tracked) -> None:
        status = final_state(tracked)
        if status is Status.APPROVED:
            self.add("Then", "the order is approved")
            self._came_back(tracked, status)
            self._approved_extras(tracked)
        elif status is Status.DECLINED:
            message = tracked.status.error_message if tracked.status else ""
            self.add("Then", f'the order is declined with "{stable_text(message)}"')
            self._came_back(tracked, status)
        elif status is Status.UNKNOWN:
            self.add("Then", "the status is unknown")
        else:
            raise ExportError(f"{tracked.label}: no step checks a {status.value} order")

    def _came_back(self, tracked: Tracked, status: Status) -> None:
        """Gateway-run: the gateway sent the payer back with the final status, signed (nothing to upload)."""
        redirect = tracked.redirect
        signed = redirect is not None and redirect.control_ok and redirect.status == status.value
        if id(tracked) in self.gateway_run and signed:
            self.add("Then", f'the payer comes back to the merchant with a signed "{status.value}"')
        if id(tracked) in self.redirected and signed:  # (Hosted Fields: status, orderid, merchant_order, control)
            self.add(
                "Then", f"the payer's browser posts a signed \"{status.value}\" back to the merchant's redirect_url"
            )

    def _approved_extras(self, tracked: Tracked) -> None:
        redirect = tracked.redirect
        merchant_run = id(tracked) in self.challenged and id(tracked) not in self.gateway_run
        if redirect is not None and redirect.control_ok and merchant_run:
            self.add("Then", "the payer's redirect to the merchant is signed by the gateway")
        indicator = tracked.status.get("three-ds-comp-ind") if tracked.status else ""
        if id(tracked) in self.methods and id(tracked) not in self.challenged and indicator:
            self.add("Then", f'the status shows the method step indicator "{indicator}"')
        signed = [c for c in tracked.callbacks if c.status == "approved" and c.control_ok]
        if self.callbacks and signed:
            self.add("Then", 'the gateway calls the merchant back with a signed "approved"')
            self.add("Then", "the callback matches the status")

    def _check_outcome(self, tracked: Tracked) -> None:
        status = final_state(tracked)
        if status is Status.APPROVED:
            self.add("Then", "the payout check is approved")
        elif status is Status.DECLINED:
            message = tracked.status.error_message if tracked.status else ""
            self.add("Then", f'the payout check is declined with "{stable_text(message)}"')
        else:
            raise ExportError(f"{tracked.label}: no step checks a payout check that is {status.value}")

    def refused(self, action: Action) -> None:
        self.add("Then", f'the gateway refuses the request saying "{stable_text(action.refusal)}"')


def final_state(tracked: Tracked) -> Status:
    state = tracked.state
    if state is None or (not state.is_final and state is not Status.UNKNOWN):
        waiting = (
            " (the payer must act: follow it as the payer)" if tracked.status and tracked.status.needs_payer else ""
        )
        raise ExportError(
            f"{tracked.label}: still {state.value if state else 'unsent'}{waiting}; a scenario needs the final "
            "status to check: press Status (or act as the payer) before exporting"
        )
    return state


def money(action: Action, what: str) -> str:
    """The amount of a step phrase; the follow-up phrases of the suite are written in EUR."""
    if action.currency and action.currency != "EUR":
        raise ExportError(f"{what} in {action.currency}: the suite's {what} steps are written in EUR")
    return action.amount


def render(steps: Sequence[tuple[str, str]]) -> list[str]:
    """``Given``/``When``/``Then`` lines, ``And`` for a repeated keyword, ``#`` comments as they are."""
    lines, previous = [], ""
    for keyword, text in steps:
        if keyword == "#":
            lines.append(f"    # {text}")
            continue
        lines.append(f"    {'And' if keyword == previous else keyword} {text}")
        previous = keyword
    return lines
