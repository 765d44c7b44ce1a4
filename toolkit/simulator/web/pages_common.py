"""What every page shares: Jinja2 templates (autoescaped), error pages, the merchant redirect, request helpers.

Every page is ``no-store``: hosted pages take card data and 3-D Secure answers.  Element ids are
the contract with ``toolkit.payer`` and browser tests (see ``pages.py``); keep them stable.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import HTMLResponse

from toolkit.masking import mask_text
from toolkit.simulator.rules import hosted_fields
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.storage import Row
from toolkit.simulator.web.gateway import public_base
from toolkit.wire import decode_form

NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
TITLES = {400: "Request refused", 404: "Page not found", 409: "Page already used", 500: "Simulator failure"}


class PageError(Exception):
    """A page request the simulator refuses: HTTP status and a sentence for the payer."""

    def __init__(self, http_status: int, message: str, *, link: tuple[str, str] | None = None) -> None:
        message = mask_text(message)
        super().__init__(message)
        self.http_status = http_status
        self.message = message
        self.link = link  # (address, label) of the page the payer probably wants instead


def not_found(what: str) -> PageError:
    return PageError(404, f"{what} does not exist: the address is wrong or the simulator was reset.")


@cache
def templates() -> Environment:
    """The template environment (read-only once built; autoescape on for every template)."""
    return Environment(
        loader=PackageLoader("toolkit.simulator.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def page(template: str, http_status: int = 200, *, style: str = "standard", **context: Any) -> HTMLResponse:
    """The page ``template`` in the simulator's ``page_style``: ``alternate/<template>`` for the alternate one."""
    name = template if style == "standard" else f"{style}/{template}"
    html = templates().get_template(name).render(**context)
    return HTMLResponse(html, status_code=http_status, headers=NO_STORE)


def styled(engine: Engine, template: str, http_status: int = 200, **context: Any) -> HTMLResponse:
    """``page`` in the page style of the engine's settings."""
    return page(template, http_status, style=engine.settings.page_style, **context)


def error_page(
    http_status: int, message: str, link: tuple[str, str] | None = None, *, style: str = "standard"
) -> HTMLResponse:
    title = TITLES.get(http_status, "Request refused")
    return page("error.html", http_status, style=style, title=title, code=http_status, message=message, link=link)


def order_summary(engine: Engine, tx: Row) -> dict[str, str]:
    """What a page may show of an order: descriptor, amount, masked card; never the PAN or CVV."""
    return {
        "descriptor": tx["descriptor"],
        "amount": engine.amount_text(tx),
        "currency": tx["currency"] or "",
        "orderid": str(tx["orderid"]),
        "card": f"{tx['card_type']} ending {tx['card_last4']}" if tx["card_last4"] else "",
    }


def merchant_redirect(
    engine: Engine, tx: Row, extra: Mapping[str, str] | None = None, *, action: str | None = None
) -> HTMLResponse:
    """Behaviour section 5: the payer's browser POSTs the signed outcome to ``redirect_url``.

    ``extra`` adds the 3-D Secure result (``cres``, or ``pares`` and ``md``) that the merchant's
    server uploads; ``action``: another address of the merchant's for it (its own 1.0.2 ``TermUrl``).
    Without a ``redirect_url`` the page shows the parameters instead.  A Hosted Fields order's browser posts exactly
    ``status``, ``orderid``, ``merchant_order`` and ``control`` (hosted-fields.md section 8).
    """
    if hosted_fields.is_hosted(engine, tx):
        params = hosted_fields.return_fields(engine, tx)
    else:
        params = {**engine.outcome_params(tx), **(extra or {})}
    summary = order_summary(engine, tx)
    target = action or tx["redirect_url"]
    if not target:
        return styled(engine, "result.html", params=params, summary=summary, status=tx["status"])
    return styled(engine, "merchant_redirect.html", action=target, params=params, summary=summary)


# --- request helpers ---------------------------------------------------------------------------


def engine_of(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def base_of(request: Request) -> str:
    """The simulator's base URL as the payer's browser addressed it."""
    return public_base(request)


async def form_entries(request: Request) -> dict[str, str]:
    """The form-encoded body of a page POST (empty for GET); the last value of a name wins."""
    raw = await request.body()
    try:
        return dict(decode_form(raw))
    except UnicodeDecodeError:
        raise PageError(400, "The form data is not UTF-8 text.") from None
