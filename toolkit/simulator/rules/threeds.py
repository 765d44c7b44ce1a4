"""3-D Secure in the simulator: 2.x method step and challenge, 1.0.2 PaReq/PaRes (spec 4.2, behaviour 11 and 12).

2.x (CVV2 321, and the simulator's own 331 and 332; 111 is a card that is not enrolled: no step at all):
the status carries ``html`` that loads the method URL in a hidden frame.  The method window (``method_timeout``,
10 s) runs from the moment the payer's browser loads the method URL (behaviour 12); until then the order waits
for the payer as long as for a challenge (``challenge_timeout``), then declines.  Then one of the three paths of
behaviour 11: a challenge (CVV2 321) sends the payer to the ACS page (``redirect-to``), where the password
``hint`` gives a CRes with transStatus Y, anything else N; a frictionless approval (331) or decline (332) is
decided without the payer.  1.0.2: the two test cards go to the ACS page at once; the amount chooses the result
(outcomes.THREE_DS_V1_AMOUNTS).

Two roads through it, chosen by what the merchant does (behaviour 12):

- gateway-run (the default, and every hosted form): the status ``html`` goes on by itself after the method step
  to the gateway (``threeds_gateway.continue_after_method``), which applies the method result and takes the payer
  to the challenge; the ACS returns the payer to the gateway with the CRes / PaRes
  (``threeds_gateway.apply_returned``), which applies it: the order becomes final without any upload;
- merchant-run: once the merchant has uploaded a step result (``upload-method-url-result``...), or, in 1.0.2, its
  own page named its own ``TermUrl`` to the ACS, the ACS hands the CRes / PaRes to the merchant and the gateway
  waits for the upload, as spec 4.2 describes.

An upload that repeats what the gateway applied itself (an ``N`` after the method window passed) is answered,
not refused.  Deadlines run on the scheduler (``on_tick``).  CRes and PaRes are signed by the simulator's ACS, so
a forged one is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from decimal import Decimal
from typing import Any

from toolkit import lifecycle
from toolkit.models import Status
from toolkit.operations import ResponseKind
from toolkit.simulator.rules.engine import Call, Engine, Result, new_token
from toolkit.simulator.rules.errors import SimError, state_error
from toolkit.simulator.storage import Row, order_rows
from toolkit.testdata.outcomes import (
    CHALLENGE_FAILED,
    CHALLENGE_PASSWORD,
    CardOutcome,
    is_three_ds_v1_card,
    three_ds_v1_result,
)

V2_CHALLENGE = "v2-challenge"
V2_FRICTIONLESS = "v2-frictionless"  # the method step, then a decision without a challenge (behaviour 11, [sim])
V1 = "v1"
V2_PATHS = {"challenge": V2_CHALLENGE, "frictionless": V2_FRICTIONLESS}


def plan_three_ds(
    engine: Engine, number: str, amount: Decimal | None, outcome: CardOutcome, *, managed: bool, v1: bool | None = None
) -> dict[str, Any]:
    """The 3-D Secure columns of a new card transaction (empty when the card needs none).  ``v1``: whether the card
    is a 1.0.2 test card, when the caller knows it without the number (a Hosted Fields token keeps no number)."""
    now = engine.clock.now()
    if is_three_ds_v1_card(number) if v1 is None else v1:
        result = three_ds_v1_result(amount or Decimal("1.00"))
        return {
            "three_ds": V1,
            "tds_state": "pares",
            "tds_token": new_token(),
            "eci": result.eci,
            "deadline_at": now + engine.settings.challenge_timeout,
        }
    kind = V2_PATHS.get(outcome.three_ds)
    if kind is None:  # CVV2 111 and the others: no 3-D Secure step at all (section 10)
        return {}
    if managed:  # the hosted page does its own fingerprinting: straight to the challenge, or to the decision
        if kind == V2_FRICTIONLESS:
            return {"three_ds": kind, "tds_state": "", "tds_comp_ind": "Y", "eci": _frictionless_eci(outcome.status)}
        return {
            "three_ds": kind,
            "tds_state": "challenge",
            "tds_token": new_token(),
            "tds_comp_ind": "Y",
            "deadline_at": now + engine.settings.challenge_timeout,
        }
    return {  # the method window runs from the method step (``method_loaded``); until then the payer's time
        "three_ds": kind,
        "tds_state": "method",
        "tds_token": new_token(),
        "deadline_at": now + engine.settings.challenge_timeout,
    }


def _frictionless_eci(status: str) -> str:
    """ECI of a frictionless result: 05 authenticated (approved), 07 not (declined)."""
    return "05" if status == Status.APPROVED.value else "07"


# --- signed ACS messages -----------------------------------------------------------------------


def _secret(engine: Engine) -> bytes:
    return engine.store.meta("acs_secret", lambda: secrets.token_hex(32)).encode()


def sign_message(engine: Engine, payload: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode()).decode().rstrip("=")
    mac = hmac.new(_secret(engine), body.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{body}.{mac}"


def read_message(engine: Engine, message: str, what: str) -> dict[str, Any]:
    body, _, mac = message.strip().partition(".")
    expected = hmac.new(_secret(engine), body.encode(), hashlib.sha256).hexdigest()[:32]
    if not mac or not hmac.compare_digest(mac.encode(), expected.encode()):
        raise SimError(f"{what} is not one issued by the simulator's ACS (signature check failed)", code="1")
    data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return data


# --- the payer's side (pages) ------------------------------------------------------------------


def by_token(engine: Engine, token: str) -> Row | None:
    return order_rows.by_tds_token(engine.store, token)


def method_loaded(engine: Engine, token: str) -> Row | None:
    """The payer's browser loaded the method URL (the ACS fingerprinted it): the method step starts, and its
    window (``method_timeout``) runs from this first load (behaviour 12)."""
    with engine.store.transaction():
        tx = by_token(engine, token)
        if tx is None or engine.extra(tx).get("method_loaded"):
            return tx
        now = engine.clock.now()
        if tx["tds_state"] == "method" and tx["status"] == Status.PROCESSING.value:
            tx = engine.update(tx, deadline_at=now + engine.settings.method_timeout)
        return engine.set_extra(tx, method_loaded=True, method_loaded_at=now)


def challenge_cres(engine: Engine, token: str, password: str) -> tuple[Row, str]:
    """The payer answered the ACS challenge: a signed CRes with transStatus Y (password ``hint``) or N."""
    tx = by_token(engine, token)
    if tx is None or tx["tds_state"] != "challenge":
        raise state_error("no 3-D Secure challenge is waiting on this page")
    status = "Y" if password == CHALLENGE_PASSWORD else "N"
    cres = sign_message(
        engine,
        {
            "messageType": "CRes",
            "messageVersion": "2.2.0",
            "acsTransID": token,
            "orderid": tx["orderid"],
            "transStatus": status,
        },
    )
    return tx, cres


def v1_pares(engine: Engine, token: str, password: str | None = None) -> tuple[Row, str]:
    """The payer finished the 1.0.2 ACS page: a signed PaRes with the amount's result."""
    tx = by_token(engine, token)
    if tx is None or tx["tds_state"] != "pares":
        raise state_error("no 3-D Secure 1.0.2 authentication is waiting on this page")
    result = three_ds_v1_result(engine.amount_text(tx) or "1.00")
    authenticated = result.authenticated and (password is None or password == CHALLENGE_PASSWORD)
    pares = sign_message(
        engine, {"messageType": "PaRes", "orderid": tx["orderid"], "eci": result.eci, "authenticated": authenticated}
    )
    return tx, pares


def record_answer(engine: Engine, tx: Row) -> Row:
    """The payer answered the ACS page of an API flow: the page is used up; the merchant uploads the result."""
    return engine.set_extra(tx, acs_answered=True, acs_answered_at=engine.clock.now())


def was_answered(engine: Engine, tx: Row) -> bool:
    return bool(engine.extra(tx).get("acs_answered"))


def is_managed(engine: Engine, tx: Row) -> bool:
    """A hosted form's transaction: the gateway applies the CRes/PaRes itself."""
    return bool(engine.extra(tx).get("managed"))


# --- the two roads (behaviour 12) --------------------------------------------------------------


def merchant_runs(engine: Engine, tx: Row) -> bool:
    """The merchant has uploaded a step result (or named its own 1.0.2 ``TermUrl``): it runs 3-D Secure itself."""
    extra = engine.extra(tx)
    return bool(extra.get("merchant_run")) and not extra.get("managed")


def gateway_runs(engine: Engine, tx: Row) -> bool:
    """The gateway applies the method result and the ACS's result itself (the default; every hosted form)."""
    return not merchant_runs(engine, tx)


def run_by_merchant(engine: Engine, tx: Row, term_url: str = "") -> Row:
    """From now on the merchant runs this order's 3-D Secure (``term_url``: where its 1.0.2 ACS result goes)."""
    extra = engine.extra(tx)
    if extra.get("managed") or (extra.get("merchant_run") and extra.get("term_url", "") == term_url):
        return tx
    return engine.set_extra(tx, merchant_run=True, **({"term_url": term_url} if term_url else {}))


def term_url(engine: Engine, tx: Row) -> str:
    """Where a merchant-run 1.0.2 ACS result goes: the merchant's own ``TermUrl``, else its ``redirect_url``."""
    return str(engine.extra(tx).get("term_url") or tx["redirect_url"])


# --- results: uploaded by the merchant, or applied by the hosted pages -------------------------


def apply_cres(engine: Engine, tx: Row, cres: str) -> Row:
    if tx["tds_state"] != "challenge":
        raise state_error(f"no 3-D Secure challenge is pending for orderid {tx['orderid']} (state {_state(tx)})")
    data = _result_for(engine, tx, cres, "cres")
    return _authenticated(engine, tx, data.get("transStatus") == "Y", eci="05")


def apply_pares(engine: Engine, tx: Row, pares: str) -> Row:
    if tx["tds_state"] != "pares":
        raise state_error(f"no 3-D Secure 1.0.2 result is pending for orderid {tx['orderid']} (state {_state(tx)})")
    data = _result_for(engine, tx, pares, "pares")
    return _authenticated(engine, tx, bool(data.get("authenticated")), eci=str(data.get("eci", "")))


def _result_for(engine: Engine, tx: Row, message: str, what: str) -> dict[str, Any]:
    """The signed CRes / PaRes, which must be this order's own (error code 1 otherwise)."""
    data = read_message(engine, message, what)
    if data.get("orderid") != tx["orderid"]:
        raise SimError(f"{what} belongs to orderid {data.get('orderid')}, not {tx['orderid']}", code="1")
    return data


def _authenticated(engine: Engine, tx: Row, passed: bool, *, eci: str) -> Row:
    """A failed authentication declines the order; a passed one ends 3-D Secure and the decision follows."""
    if not passed:
        return engine.finalize(tx, Status.DECLINED.value, CHALLENGE_FAILED.error_code, CHALLENGE_FAILED.error_message)
    return engine.schedule(engine.update(tx, tds_state="done", eci=eci))


def apply_method_result(engine: Engine, tx: Row, indicator: str) -> Row:
    if tx["tds_state"] != "method":
        extra = engine.extra(tx)
        by_gateway = extra.get("method_timed_out") or extra.get("gateway_continued_at") is not None
        why = f"; {_applied_how(engine, tx)}" if by_gateway else ""
        raise state_error(f"no 3-D Secure method step is pending for orderid {tx['orderid']} (state {_state(tx)}){why}")
    if tx["three_ds"] == V2_CHALLENGE:
        deadline = engine.clock.now() + engine.settings.challenge_timeout
        return engine.update(
            tx,
            tds_state="challenge",
            tds_comp_ind=indicator,
            deadline_at=deadline,
            stage=lifecycle.stage(tx["kind"], lifecycle.THREE_DS_VALIDATING),
        )
    eci = _frictionless_eci(tx["plan_status"])  # the planned outcome decides without a challenge
    return engine.schedule(engine.update(tx, tds_state="done", tds_comp_ind=indicator, deadline_at=None, eci=eci))


def _state(tx: Row) -> str:
    return f"{tx['status']}, 3-D Secure {tx['tds_state'] or 'not used'}"


# --- gateway operations (section 4.2) ----------------------------------------------------------


def _target(engine: Engine, call: Call) -> Row:
    """The order the upload names; the request's serial-number finds it with ``by-request-sn``."""
    tx = engine.order(call)
    engine.remember_request(call.serial, tx)
    return tx


def upload_method_url_result(engine: Engine, call: Call) -> Result:
    """The method step's result: ``Y`` completed, ``N`` not within the window, ``U`` no method URL (spec 4.2).

    ``Y`` although the payer's browser never loaded the method URL is a merchant bug: refused (a lenient
    simulator accepts it with a warning).  A lenient simulator takes a missing ``threeDSCompInd`` as ``Y``.
    After the method window the step has already timed out as ``N`` (the scheduler's work, done first here): an
    ``N`` then agrees with what the gateway applied and is answered (behaviour 12); another indicator is refused.
    The order is merchant-run from this upload on.
    """
    with engine.store.transaction():
        tx = _target(engine, call)
        indicator = call.fields.get("threeDSCompInd", "Y")  # (absent only on a lenient simulator)
        if tx["tds_state"] == "method" and indicator == "Y" and not engine.extra(tx).get("method_loaded"):
            call.forgive(
                "threeDSCompInd: Y (completed), but the payer's browser never loaded the 3-D Secure method URL "
                "(three-ds-method-url of the status); load it in the payer's browser, or send N or U"
            )
        if _applied_already(engine, tx, indicator):
            call.warnings.append(
                f"threeDSCompInd: {indicator} agrees with what the gateway applied itself "
                f"({_applied_how(engine, tx)}): answered, nothing changes"
            )
            tx = run_by_merchant(engine, tx)
        else:
            tx = apply_method_result(engine, run_by_merchant(engine, tx), indicator)
    return Result(ResponseKind.ASYNC, tx)


def _applied_already(engine: Engine, tx: Row, indicator: str) -> bool:
    """The gateway applied this very method result itself (the window passed, or its page went on)."""
    extra = engine.extra(tx)
    by_gateway = extra.get("method_timed_out") or extra.get("gateway_continued_at") is not None
    return tx["tds_state"] != "method" and bool(by_gateway) and tx["tds_comp_ind"] == indicator


def _applied_how(engine: Engine, tx: Row) -> str:
    """How the gateway applied the method result itself, in words."""
    if engine.extra(tx).get("method_timed_out"):
        return f"the method window ({engine.settings.method_timeout:g} s) passed and the step timed out as N"
    return f"the payer's page went on to the gateway after the method step, which applied {tx['tds_comp_ind']}"


def upload_cres_result(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        tx = _target(engine, call)
        tx = apply_cres(engine, run_by_merchant(engine, tx), call.fields["cRes"])
    return Result(ResponseKind.ASYNC, tx)


def upload_pares_result(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        tx = _target(engine, call)
        tx = apply_pares(engine, run_by_merchant(engine, tx), call.fields["paRes"])
    return Result(ResponseKind.ASYNC, tx)


NOT_IN_TIME = ("05", "3-D Secure result not received in time")


def on_tick(engine: Engine, now: float) -> None:
    """A method step whose window passed becomes N; one the payer never started (nothing loaded the method URL),
    and an unanswered challenge, decline."""
    for tx in order_rows.past_deadline(engine.store, ("method",), now):
        if not engine.extra(tx).get("method_loaded"):
            engine.finalize(engine.set_extra(tx, method_never_started=True), Status.DECLINED.value, *NOT_IN_TIME)
            continue
        tx = engine.set_extra(tx, method_timed_out=True)
        apply_method_result(engine, tx, "N")
    for tx in order_rows.past_deadline(engine.store, ("challenge", "pares"), now):
        engine.finalize(tx, Status.DECLINED.value, *NOT_IN_TIME)


def install(engine: Engine) -> None:
    engine.register("upload_method_url_result", upload_method_url_result)
    engine.register("upload_cres_result", upload_cres_result)
    engine.register("upload_pares_result", upload_pares_result)
    engine.tick_hooks.append(lambda now: on_tick(engine, now))
