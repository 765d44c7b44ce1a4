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

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolkit.simulator import pools
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.storage import StoreUnavailable
from toolkit.simulator.web import pages_forms, pages_threeds
from toolkit.simulator.web.pages_common import PageError, error_page, form_entries

log = logging.getLogger("gatekit.simulator")


PageFunction = Callable[..., Response]  # (request, token) or (request, token, entries: the form's fields)


def routes() -> list[Route]:
    """The hosted payment pages and the 3-D Secure pages."""
    return [Route(path, page_endpoint(page), methods=methods) for path, page, methods in
            (*pages_forms.pages(), *pages_threeds.pages())]  # fmt: skip


def page_endpoint(page: PageFunction) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    """A page function as an endpoint of the request alone, run in the pages' own threads (``pools``: control
    long-polls cannot hold them), its refusals HTML pages (the API's routes answer in the gateway's format)."""
    takes_entries = "entries" in inspect.signature(page).parameters

    async def endpoint(request: Request) -> Response:
        style = request.app.state.settings.page_style
        try:
            token = str(request.path_params["token"])
            args = (request, token, await form_entries(request)) if takes_entries else (request, token)
            return await pools.run(pools.of(request).pages, page, *args)
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

    endpoint.__name__, endpoint.__qualname__, endpoint.__doc__ = page.__name__, page.__qualname__, page.__doc__
    return endpoint
