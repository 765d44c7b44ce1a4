"""The tokenize call the Hosted Fields SDK makes from the payer's page (hosted-fields.md section 6), on the SDK's origin
(the simulator's root, outside ``/paynet``)::

    OPTIONS /api/v4/tokenize/hosted-fields   204: the CORS preflight of the page's cross-origin ``fetch``
    POST    /api/v4/tokenize/hosted-fields   JSON {"ephemeralTicket", "cardNumber", "expiryDate", "cvv"}
                                             200 {"hostedFieldsToken": "..."}
                                             400 {"code": 4001-4004, "message", "payerMessage"?, "field"?}

Not a merchant-signed operation: the ticket is the credential (``rules.hosted_fields``).  Both answers carry the CORS
headers of section 6 (``Access-Control-Allow-Origin`` the request's ``Origin``, ``*`` without one; ``Vary: Origin``)
and ``Cache-Control: no-store``.  The body is read as JSON whatever its ``Content-Type``.  Each call is journaled
(``tokenize_hosted_fields``) with its fields masked: the card number as BIN and last four, the CVV never.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolkit.simulator import journal, pools
from toolkit.simulator.rules import hosted_fields
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.storage import StoreUnavailable
from toolkit.wire import DecodeError, loads_json

log = logging.getLogger("gatekit.simulator")
PATH = "/api/v4/tokenize/hosted-fields"
OPERATION = "tokenize_hosted_fields"  # its name in the journal


def cors_headers(request: Request) -> dict[str, str]:
    """Section 6: the page's origin allowed, ``content-type`` as a request header, POST and OPTIONS."""
    return {
        "Access-Control-Allow-Origin": request.headers.get("origin") or "*",
        "Access-Control-Allow-Headers": "content-type",
        "Access-Control-Allow-Methods": "POST, OPTIONS",
        "Vary": "Origin",
        "Cache-Control": "no-store",
    }


async def tokenize(request: Request) -> Response:
    """The preflight (204), or the call."""
    if request.method == "OPTIONS":
        return Response(status_code=204, headers=cors_headers(request))
    raw = await request.body()
    try:
        body: object = loads_json(raw)
    except DecodeError:
        body = None
    status, answer = await pools.run(pools.of(request).pages, _answer, request.app.state.engine, body)
    _journal(request, body, status, answer)
    return JSONResponse(answer, status_code=status, headers=cors_headers(request))


def _answer(engine: Engine, body: object) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON answer) of a tokenize call (run in a pages thread)."""
    try:
        minted = hosted_fields.tokenize(engine, body)
    except hosted_fields.TokenizeRefused as refusal:
        return 400, {**refusal.body(), "_login": refusal.login}
    except StoreUnavailable as exc:  # (a shared database stopped or restarting: no code, the SDK says 5000)
        return 503, {"message": f"{exc}; try again"}
    except Exception:
        log.exception("simulator failure in %s", OPERATION)
        return 500, {"message": "internal error of the simulator"}
    return 200, {"hostedFieldsToken": minted.token, "_login": minted.login}


def _journal(request: Request, body: object, status: int, answer: dict[str, Any]) -> None:
    """The call in the journal: the fields masked by name and by value (``journal.sent``)."""
    login = str(answer.pop("_login", ""))
    given = body if isinstance(body, dict) else {}
    pairs = [(name, given[name]) for name in hosted_fields.TOKEN_FIELDS if isinstance(given.get(name), str)]
    kind = "" if status == 200 else "validation-error" if status < 500 else "error"
    error = f"{answer.get('code', status)} {answer.get('message', '')}" if kind else ""
    line = journal.entry(
        at=request.app.state.engine.clock.now(),
        login=login,
        operation=OPERATION,
        path=PATH,
        http_status=status,
        body={"type": kind, "error-message": error},
        sent=journal.sent(pairs),
        warnings=[] if isinstance(body, dict) else ["the body is not a JSON object"],
    )
    request.app.state.journal.record(line)


def routes() -> list[Route]:
    return [Route(PATH, tokenize, methods=["POST", "OPTIONS"])]
