"""The next steps of a flow on the selected order: capture, return, void, card ref + rebill, payout-pay.

Each runs through ``toolkit.flows.Merchant`` (the same calls as the certification steps), follows
the order it creates until it settles, and is recorded for the exporter, refusals included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal

from toolkit.errors import ApiError, GatewayError
from toolkit.explorer.context import StepContext
from toolkit.explorer.history import Action, Result, Tracked
from toolkit.flows import Order

CAPTURE, RETURN, VOID, REBILL, PAYOUT_PAY = "capture", "return", "void", "card ref + rebill", "payout-pay"
STEPS = (CAPTURE, RETURN, VOID, REBILL, PAYOUT_PAY)
# The operation each step sends (card ref + rebill: create_card_ref first, then make_rebill); what it applies to
# is the catalogue's (``Operation.applies_to``)
OPERATION_OF = {CAPTURE: "capture", RETURN: "return", VOID: "void", REBILL: "create_card_ref", PAYOUT_PAY: "payout_pay"}


class StepRunner:
    """Runs a next step for the explorer's model (a ``StepContext``) and records it in the model's history."""

    def __init__(self, model: StepContext) -> None:
        self.model = model

    def run(self, step: str, tracked: Tracked, amount: Decimal | None) -> Result:
        merchant = self.model.session.merchant
        order = tracked.order
        if step == REBILL:
            return self._card_ref_and_rebill(tracked, amount)
        calls: dict[str, Callable[[], Order]] = {
            CAPTURE: lambda: merchant.capture(order, amount),
            RETURN: lambda: merchant.return_(order, amount),
            VOID: lambda: merchant.void(order, amount),
            PAYOUT_PAY: lambda: merchant.payout_pay(order),
        }
        return self._attempt(OPERATION_OF[step], tracked, calls[step], select=step == PAYOUT_PAY)

    def _attempt(self, operation: str, target: Tracked, call: Callable[[], Order], *, select: bool) -> Result:
        model = self.model
        mark = len(model.session.exchanges)
        try:
            child = call()
        except ApiError as exc:
            sent = self._sent(operation, mark)
            model.history.append(Action(operation, target, None, sent, refusal=exc.error_message))
            return Result(f"{operation} refused", False, exc.error_message, model.session.exchanges_since(mark))
        except GatewayError as exc:
            return Result(f"{operation} failed", False, str(exc), model.session.exchanges_since(mark))
        created = model.track(child, parent=target, select=select)
        status = model.settle(created)
        model.history.append(Action(operation, target, created, dict(child.fields)))
        return Result(created.label, True, "", model.session.exchanges_since(mark), status)

    def _sent(self, operation: str, mark: int) -> dict[str, str]:
        """The masked fields of the request that was refused."""
        tried = [e for e in self.model.session.exchanges_since(mark) if e.operation == operation]
        return dict(tried[-1].request_fields) if tried else {}

    def _card_ref_and_rebill(self, tracked: Tracked, amount: Decimal | None) -> Result:
        model, merchant = self.model, self.model.session.merchant
        mark = len(model.session.exchanges)
        ids = {"client_orderid": tracked.client_orderid, "orderid": tracked.orderid}
        try:
            ref = merchant.card_ref(tracked.order)
        except ApiError as exc:
            model.history.append(Action("create_card_ref", tracked, None, ids, refusal=exc.error_message))
            return Result("create_card_ref refused", False, exc.error_message, model.session.exchanges_since(mark))
        except GatewayError as exc:
            return Result("create_card_ref failed", False, str(exc), model.session.exchanges_since(mark))
        tracked.card_ref_id = ref.card_ref_id
        model.history.append(Action("create_card_ref", tracked, None, ids, detail={"cardrefid": ref.card_ref_id}))
        result = self._attempt(
            "make_rebill", tracked, lambda: merchant.rebill(ref.card_ref_id, amount=amount), select=True
        )
        title = f"card reference {ref.card_ref_id}, then {result.title}"
        return replace(result, title=title, exchanges=model.session.exchanges_since(mark))
