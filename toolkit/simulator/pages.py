"""The payer's pages: hosted payment forms and the 3-D Secure ACS, under ``/paynet`` (``urls.py``).

Routes (``pages_forms``, ``pages_threeds``)::

    GET  /paynet/form/{token}                  hosted page: form#payment-form, button#pay
    POST /paynet/form/{token}                  div#form-errors + p.field-error#error-{field}, or
                                               303 to the ACS page, or the merchant redirect
    GET|POST /paynet/3ds/v2/method/{token}     div#threeds-method-done
    GET|POST /paynet/3ds/v2/acs/{token}        form#challenge-form, input#password, button#submit-challenge
    POST /paynet/3ds/v2/acs/{token}/answer     the merchant redirect (+ ``cres`` in the API flow)
    GET|POST /paynet/3ds/v1/acs/{token}        form#acs-form, input#password, button#submit-acs
    POST /paynet/3ds/v1/acs/{token}/answer     the merchant redirect (+ ``pares``, ``md`` in the API flow)

The merchant redirect is form#merchant-redirect (hidden inputs, submitted on load, button#continue);
without a ``redirect_url`` the 3-D Secure result is shown in code#cres or code#pares.
Refusals are pages with div#page-error: 404 unknown address, 409 page already used, and the
status of any ``SimError``.  The payer does not need these ids (it reads pages as a person does), but the
tests and notebooks use them.  ``[simulator] page_style = "alternate"`` serves the same pages with other ids,
names and layout (``templates/alternate``): a combined expiry, an OTP-style code, ``onload`` auto-submits,
the ACS entered by a self-submitting post: pages the payer has no ids for.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.responses import Response

from toolkit.simulator import pages_forms, pages_threeds, pools
from toolkit.simulator.engine import Engine
from toolkit.simulator.errors import SimError
from toolkit.simulator.pages_common import PageError, error_page, form_entries
from toolkit.simulator.store import StoreUnavailable

log = logging.getLogger("gatekit.simulator")


PageFunction = Callable[..., Response]  # (request, token) or (request, token, entries: the form's fields)


def page_endpoint(page: PageFunction) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    """A page function as an endpoint of the request alone, run in the pages' own threads (``pools``: control
    long-polls cannot hold them).  The ``{token}`` and the form's fields are read here: typed parameters would
    have FastAPI build pydantic fields for them under ``warnings.catch_warnings()``, which changes the whole
    process's warning filters and is not thread-safe (issue 34, #2)."""
    takes_entries = "entries" in inspect.signature(page).parameters

    async def endpoint(request: Request) -> Response:
        token = str(request.path_params["token"])
        args = (request, token, await form_entries(request)) if takes_entries else (request, token)
        return await pools.run(pools.of(request).pages, page, *args)

    endpoint.__name__, endpoint.__qualname__, endpoint.__doc__ = page.__name__, page.__qualname__, page.__doc__
    return endpoint


class PageRoute(APIRoute):
    """A route whose refusals are HTML pages (the API's routes answer in the gateway's format)."""

    def __init__(self, path: str, endpoint: PageFunction, **kwargs: Any) -> None:
        super().__init__(path, page_endpoint(endpoint), **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            style = request.app.state.settings.page_style
            try:
                return await handler(request)
            except PageError as error:
                return error_page(error.http_status, error.message, error.link, style=style)
            except SimError as error:
                return error_page(error.http_status, error.message, style=style)
            except StoreUnavailable as error:  # (a shared database stopped or restarting: passing)
                return error_page(503, f"{error}; try again in a moment.", style=style)
            except HTTPException:  # routing and protocol answers stay Starlette's
                raise
            except Exception as exc:  # a bug: say so on the page, and log it
                log.exception("simulator page failure at %s", request.url.path)
                message = f"The simulator failed on this page ({exc.__class__.__name__})."
                return error_page(500, message, style=style)

        return guarded


def install(app: FastAPI, engine: Engine) -> None:
    """Add the hosted payment pages and the 3-D Secure pages to the app."""
    router = APIRouter(route_class=PageRoute, include_in_schema=False)
    pages_forms.add_routes(router)
    pages_threeds.add_routes(router)
    app.include_router(router)
