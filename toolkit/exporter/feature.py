"""Export what was done in the explorer as a Gherkin scenario that runs in the certification suite.

Only phrases of ``steps/`` are written (``toolkit.exporter.phrases``), and only where the step does
what was done: the step fixtures (``card``, ``order``, ``check``, ``card_ref``) are followed as the
steps set them (``toolkit.exporter.gherkin``), so that every action applies to the order the step
will use.  An action no step can express is refused with ``ExportError``, which says which action,
why, and what the exporter can express.  Messages asserted in Then steps keep only their stable
words (ids, amounts and balances differ between runs).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.exporter.gherkin import ExportError, Writer, render, stable_text
from toolkit.exporter.phrases import CONTINUATIONS, EXPRESSIBLE, HANDLERS
from toolkit.exporter.records import PAYER_CHALLENGE, PAYER_HOSTED, PAYER_STATUS_PAGE, PAYER_TOKENIZE, Action
from toolkit.operations import OPERATIONS

FEATURE = "Scenarios recorded in the gatekit explorer"
_FLUSHED_BY_HANDLER = frozenset({"capture", "return", "status"})  # they group or flush themselves
_UNNAMED = frozenset({"status_v4"})  # a Hosted Fields sale's polls
_CHECKOUT = "Hosted Fields checkout page"

__all__ = ["ExportError", "export_feature", "scenario_name", "stable_text"]


def scenario_name(actions: Sequence[Action]) -> str:
    """``Recorded in the explorer: sale with 3-D Secure, return x2``: the operations, in order."""
    names: list[str] = []
    for action in actions:
        if action.operation == PAYER_STATUS_PAGE and names:
            names[-1] += " with 3-D Secure run by the gateway"
        elif action.operation == PAYER_CHALLENGE and names and "3-D Secure" not in names[-1]:
            names[-1] += " with 3-D Secure"
        elif action.operation == PAYER_HOSTED and names:
            names[-1] += " paid by the payer"
        elif action.operation == "create_ephemeral_ticket":
            names.append(_CHECKOUT)
        elif action.operation == "sale_v4":
            refused = " (refused)" if action.refusal else ""
            if names and names[-1] == _CHECKOUT and not refused:
                names.pop()  # (the page's ticket is part of the sale it led to)
            names.append("Hosted Fields sale" + refused)
        elif action.operation == PAYER_TOKENIZE and action.refusal:
            names.append("the card typed again (refused)")
        elif action.operation in _UNNAMED:
            continue
        elif action.operation in OPERATIONS and not action.operation.startswith("upload_"):
            names.append(action.operation.replace("_", " ") + (" (refused)" if action.refusal else ""))
    collapsed: list[tuple[str, int]] = []
    for name in names:
        if collapsed and collapsed[-1][0] == name:
            collapsed[-1] = (name, collapsed[-1][1] + 1)
        else:
            collapsed.append((name, 1))
    return "Recorded in the explorer: " + ", ".join(n + (f" x{count}" if count > 1 else "") for n, count in collapsed)


def export_feature(
    actions: Sequence[Action], *, scenario: str | None = None, feature: str = FEATURE, callbacks: bool = False
) -> str:
    """A feature file with one scenario made of the suite's step phrases; ExportError when one is missing."""
    if not actions:
        raise ExportError("nothing to export: send an order first")
    writer = Writer(callbacks=callbacks)
    for index, action in enumerate(actions, 1):
        handler = HANDLERS.get(action.operation)
        if handler is None:
            raise ExportError(
                f"action {index} ({action.operation}) has no step in the suite; the exporter expresses: {EXPRESSIBLE}"
            )
        if action.operation not in CONTINUATIONS | _FLUSHED_BY_HANDLER:
            writer.flush()
        try:
            handler(writer, action)
        except ExportError as exc:
            raise ExportError(f"action {index} ({action.operation}): {exc}") from None
        if action.edited:
            writer.add("#", f"edited in the explorer, not expressed by the steps: {', '.join(action.edited)}")
    try:
        writer.flush()
    except ExportError as exc:
        raise ExportError(f"at the end: {exc}") from None
    gateway_run = {"gateway_run"} if any(a.operation == PAYER_STATUS_PAGE for a in actions) else set()
    tags = sorted({a.operation for a in actions if a.operation in OPERATIONS} | gateway_run)
    lines = [
        "@exported",
        f"Feature: {feature}",
        "  Recorded in the gatekit explorer (toolkit.explorer); every step is a phrase of steps/.",
        "",
        "  " + " ".join(f"@{tag}" for tag in tags),
        f"  Scenario: {scenario or scenario_name(actions)}",
        *render(writer.steps),
    ]
    return "\n".join(lines) + "\n"
