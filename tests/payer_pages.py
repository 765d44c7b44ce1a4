"""Pages the payer has never seen: hosted payment pages and issuer (ACS) pages written in other styles than
the simulator's, served by a small HTTP server on a loopback port.

None of them uses an id or a field name of the simulator's pages.  What they are modelled on:

- ``/hosted/combined``: a hosted page with ``pan``, one ``MM / YY`` expiry field, ``cvc`` and ``holder``; after
  Pay a "processing" page with a meta refresh, then the way back to the merchant (a script submit);
- ``/hosted/selects``: ``card[number]``, a month select (``1``..``12`` shown as ``01 - Jan``), a two-digit year
  select, ``card[cvv]``, ``card[name]``, labels wrapping their inputs;
- ``/hosted/framed``: the payment form inside an iframe of the page;
- ACS styles, entered from the hosted pages (CVV2 ``321``) or from a status ``html`` (``/status-html/<style>``):
  ``otp`` (a one-time-code input, code ``123456``: a profile's ``challenge_password``), ``approve`` (the family's
  e2e emulator: ``<form id="acsForm">``, hidden fields and an Approve button, no password), ``v1`` (3-D Secure
  1.0.2: ``PaReq``/``MD``/``TermUrl`` in, a password, ``PaRes``/``MD`` posted to ``TermUrl`` by ``onload``),
  ``v2`` (2.x: ``creq``/``threeDSSessionData`` in, ``challengeDataEntry``, ``cres`` posted back by a script);
- ``/status-html/method``: the 3-D Secure method step as a form posting ``threeDSMethodData`` into a hidden frame;
- ``/weird``: a page with no payment form or challenge (a search box), some card digits in its text.

What reached the merchant (``/merchant/return``) and the method URL (``/acs/method``) is recorded.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

PASSWORD = "hint"  # the outcome table's, on the styles that take a password
OTP_CODE = "123456"  # the otp style's code: a profile says it (``challenge_password``)
ACS_STYLES = ("otp", "approve", "v1", "v2")
HOSTED_STYLES = ("combined", "selects", "framed")
WEIRD_DIGITS = "4538977399606732"  # card digits in the unreadable page's text: never in a payer's message


def _luhn(number: str) -> bool:
    digits = [int(d) for d in number if d.isdigit()]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits)))
    return len(digits) >= 12 and total % 10 == 0


def _doc(title: str, body: str, *, head: str = "", onload: str = "") -> str:
    load = f' onload="{html.escape(onload)}"' if onload else ""
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>{head}"
        f"<style>body{{font-family:sans-serif;margin:2em}}.err{{color:#b00}}</style></head><body{load}>{body}"
        "</body></html>"
    )


def _hidden(fields: dict[str, str]) -> str:
    return "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in fields.items())


@dataclass
class Recorded:
    """What the pages' other ends received."""

    returns: list[dict[str, str]] = field(default_factory=list)  # what the payer brought back to the merchant
    method_loads: list[dict[str, str]] = field(default_factory=list)


class PagesServer:
    """The page fixtures on ``http://127.0.0.1:<port>``; ``recorded`` holds what reached the merchant."""

    def __init__(self) -> None:
        self.recorded = Recorded()
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"pages": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def merchant_url(self) -> str:
        return f"{self.base}/merchant/return"

    def start(self) -> PagesServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def hosted(self, style: str, acs: str = "otp") -> str:
        return f"{self.base}/hosted/{style}?" + urlencode({"acs": acs})

    def status_html(self, style: str) -> str:
        """The ``html`` a processing status would carry for this ACS style (or ``method``)."""
        return _status_html(self.base, style)

    def record(self, where: str, fields: dict[str, str]) -> None:
        with self._lock:
            (self.recorded.returns if where == "return" else self.recorded.method_loads).append(fields)

    # --- pages -----------------------------------------------------------------------------------

    def page(self, method: str, path: str, query: dict[str, str], form: dict[str, str]) -> tuple[int, str]:
        parts = [part for part in path.split("/") if part]
        routes: dict[str, Callable[[list[str], dict[str, str], dict[str, str]], tuple[int, str]]] = {
            "hosted": self._hosted,
            "acs": self._acs,
            "status-html": lambda p, q, f: (200, _status_html(self.base, p[1])),
            "merchant": self._merchant,
            "weird": lambda p, q, f: (200, _weird()),
        }
        route = routes.get(parts[0] if parts else "")
        return route(parts, query, form) if route else (404, _doc("Not found", "<h1>Not found</h1>"))

    def _merchant(self, parts: list[str], query: dict[str, str], form: dict[str, str]) -> tuple[int, str]:
        self.record("return", {**query, **form})
        return 200, _doc("Thank you", f"<h1>Thank you</h1><p>status {html.escape(form.get('status', '?'))}</p>")

    def _hosted(self, parts: list[str], query: dict[str, str], form: dict[str, str]) -> tuple[int, str]:
        style, step = parts[1], parts[2] if len(parts) > 2 else ""
        acs = query.get("acs", "otp")
        if style == "framed" and not step:
            inner = html.escape(self.hosted("combined", acs))
            return 200, _doc("Checkout", f'<h1>Checkout</h1><iframe src="{inner}" width=600 height=500></iframe>')
        if step == "pay":
            return self._pay(style, acs, form)
        if step == "done":
            return 200, _back(self.merchant_url, {"status": "approved", "orderid": "771"})
        return 200, _HOSTED[style](f"{self.base}/hosted/{style}/pay?acs={acs}", "")

    def _pay(self, style: str, acs: str, form: dict[str, str]) -> tuple[int, str]:
        number, month, year, cvv, holder = _card_of(style, form)
        problems = []
        if not _luhn(number):
            problems.append("The card number is not valid")
        if not (month.isdigit() and 1 <= int(month) <= 12 and year.isdigit()):
            problems.append("The expiry date is not valid")
        if not (cvv.isdigit() and len(cvv) in (3, 4)):
            problems.append("The security code must be 3 or 4 digits")
        if not holder:
            problems.append("Enter the name on the card")
        if problems:
            errors = "".join(f'<p class="err" role="alert">{html.escape(p)}</p>' for p in problems)
            return 200, _HOSTED[style](f"{self.base}/hosted/{style}/pay?acs={acs}", errors)
        if cvv == "321":  # the challenge: the ACS of the chosen style, entered by a self-submitting form
            return 200, _status_html(self.base, acs, back=self.merchant_url)
        done = html.escape(f"{self.base}/hosted/{style}/done")
        return 200, _doc("Processing", "<p>Processing your payment, please wait.</p>",
                         head=f'<meta http-equiv="refresh" content="0; url={done}">')  # fmt: skip

    def _acs(self, parts: list[str], query: dict[str, str], form: dict[str, str]) -> tuple[int, str]:
        style, step = parts[1], parts[2] if len(parts) > 2 else ""
        if style == "method":
            self.record("method", form)
            return 200, _doc("3DS Method", "<p>done</p>")
        back = form.get("TermUrl") or form.get("back") or self.merchant_url
        if not step:
            return 200, _ACS[style](f"{self.base}/acs/{style}/answer", form, back)
        return 200, _acs_result(style, form, back)


def _card_of(style: str, form: dict[str, str]) -> tuple[str, str, str, str, str]:
    if style == "selects":
        return (form.get("card[number]", ""), form.get("card[exp_month]", ""), "20" + form.get("card[exp_year]", ""),
                form.get("card[cvv]", ""), form.get("card[name]", ""))  # fmt: skip
    month, _, year = form.get("exp", "").replace(" ", "").partition("/")
    return form.get("pan", "").replace(" ", ""), month, year, form.get("cvc", ""), form.get("holder", "")


def _combined(action: str, errors: str) -> str:
    return _doc(
        "Secure checkout",
        f'<h1>Pay 12.00 EUR</h1>{errors}<form class=checkout method=post action="{html.escape(action)}">'
        "<p><label for=pan>Card number</label> <input id=pan name=pan autocomplete=cc-number inputmode=numeric></p>"
        '<p><label for=exp>Expiry</label> <input id=exp name=exp placeholder="MM / YY" autocomplete=cc-exp></p>'
        "<p><label for=cvc>Security code</label> <input id=cvc name=cvc autocomplete=cc-csc></p>"
        "<p><label for=holder>Name on card</label> <input id=holder name=holder autocomplete=cc-name></p>"
        '<p><button class="btn primary">Pay now</button> <a href="/cancel">Cancel</a></p></form>',
    )


def _selects(action: str, errors: str) -> str:
    months = "".join(f'<option value="{m}">{m:02d} - {n}</option>' for m, n in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1))  # fmt: skip
    years = "".join(f'<option value="{y % 100:02d}">{y}</option>' for y in range(2026, 2036))
    return _doc(
        "Card payment",
        f'<h2>Card details</h2>{errors}<form method=POST action="{html.escape(action)}">'
        '<label>Card number <input type=tel name="card[number]"></label>'
        '<label>Valid until <select name="card[exp_month]"><option value="">Month</option>' + months + "</select>"
        '<select name="card[exp_year]"><option value="">Year</option>' + years + "</select></label>"
        '<label>CVV <input type=password name="card[cvv]" maxlength=4></label>'
        '<label>Cardholder <input name="card[name]"></label>'
        '<input type=submit value="Continue"></form>',
    )


_HOSTED: dict[str, Callable[[str, str], str]] = {"combined": _combined, "selects": _selects}


def _status_html(base: str, style: str, back: str = "") -> str:
    """What a processing status (or a hosted page after Pay) hands the browser to reach the ACS."""
    back = back or f"{base}/merchant/return"
    if style == "method":
        return ('<html><body><iframe name="methodFrame" style="display:none"></iframe>'
                f'<form action="{base}/acs/method" method="post" target="methodFrame">'
                + _hidden({"threeDSMethodData": "eyJ0aHJlZURTU2VydmVyVHJhbnNJRCI6IjEifQ"})
                + "</form><script>document.forms[0].submit();</script></body></html>")  # fmt: skip
    if style == "v1":
        fields = {"PaReq": "eJzLSM3JyQcABiwCFQ==", "MD": "771", "TermUrl": back}
        noscript = "<noscript><input type=submit value=Continue></noscript>"
        return (f'<html><body onload="document.forms[0].submit()"><form method="post" action="{base}/acs/v1">'
                + _hidden(fields) + noscript + "</form></body></html>")  # fmt: skip
    if style == "v2":
        fields = {"creq": "eyJtZXNzYWdlVHlwZSI6IkNSZXEifQ", "threeDSSessionData": "c2Vzc2lvbi03NzE", "back": back}
        return (f'<html><body><form name="challenge" method="post" action="{base}/acs/v2">' + _hidden(fields)
                + "</form><script>window.onload = function () { document.forms.challenge.submit(); };</script>"
                "</body></html>")  # fmt: skip
    fields = {"txid": "tx-771", "back": back}
    return (f'<html><body><form id="to-acs" method="post" action="{base}/acs/{style}">' + _hidden(fields)
            + "</form><script>document.getElementById('to-acs').submit()</script></body></html>")  # fmt: skip


def _otp(action: str, form: dict[str, str], back: str) -> str:
    return _doc(
        "Verify it's you",
        "<h1>Verify your payment</h1><p>We sent a code to your phone.</p>"
        f'<form id="otpForm" method="post" action="{html.escape(action)}">'
        + _hidden({**form, "back": back})
        + '<label for="otp">One-time code</label> <input id="otp" name="otp" autocomplete="one-time-code" '
        'inputmode="numeric"> <button type="submit">Verify</button></form>',
    )


def _approve(action: str, form: dict[str, str], back: str) -> str:
    return _doc(
        "ACS emulator",
        "<h3>3-D Secure emulator</h3>"
        f'<form id="acsForm" method="post" action="{html.escape(action)}">'
        + _hidden({**form, "back": back})
        + '<input type="submit" value="Approve"></form>',
    )


def _v1(action: str, form: dict[str, str], back: str) -> str:
    return _doc(
        "Verified by Visa",
        f'<h2>Enter your password</h2><form method=post action="{html.escape(action)}">'
        + _hidden({"MD": form.get("MD", ""), "PaReq": form.get("PaReq", ""), "TermUrl": back})
        + '<input type="password" name="pwd"> <input type="submit" value="Submit"></form>',
    )


def _v2(action: str, form: dict[str, str], back: str) -> str:
    session = form.get("threeDSSessionData", "")
    return _doc(
        "Authentication",
        "<div class=challenge><p>Enter the code to confirm 12.00 EUR</p>"
        f'<form method=post action="{html.escape(action)}">'
        + _hidden({"threeDSSessionData": session, "back": back})
        + '<label>Code <input name="challengeDataEntry" type="text"></label>'
        '<button name="submit" value="continue" class="btn">Submit</button>'
        '<button name="cancel" value="1" class="btn secondary">Cancel</button></form></div>',
    )


_ACS: dict[str, Callable[[str, dict[str, str], str], str]] = {"otp": _otp, "approve": _approve, "v1": _v1, "v2": _v2}


def _acs_result(style: str, form: dict[str, str], back: str) -> str:
    """The ACS's answer: the result posted back by a self-submitting form, as each style does it."""
    passed = {
        "otp": form.get("otp") == OTP_CODE,
        "approve": True,
        "v1": form.get("pwd") == PASSWORD,
        "v2": form.get("challengeDataEntry") == PASSWORD and "cancel" not in form,
    }[style]
    status = "approved" if passed else "declined"
    if style == "v1":
        fields = {"PaRes": f"pares-{status}", "MD": form.get("MD", "")}
        return _doc("Done", f'<form method="post" action="{html.escape(back)}">{_hidden(fields)}</form>',
                    onload="document.forms[0].submit()")  # fmt: skip
    if style == "v2":
        fields = {"cres": f"cres-{status}", "threeDSSessionData": form.get("threeDSSessionData", "")}
        script = "<script>window.onload = function () { document.forms['cresForm'].submit(); };</script>"
        form = f'<form id="cresForm" method="post" action="{html.escape(back)}">{_hidden(fields)}</form>'
        return _doc("Done", form + script)
    return _back(back, {"status": status, "orderid": "771"})


def _back(url: str, fields: dict[str, str]) -> str:
    """The way back to the merchant: a form submitted by a script, with a button for browsers without one."""
    return _doc(
        "Returning to the shop",
        f'<form id="back" method="post" action="{html.escape(url)}">{_hidden(fields)}'
        "<noscript><button>Return to the shop</button></noscript></form>"
        "<script>document.getElementById('back').submit();</script>",
    )


def _weird() -> str:
    return _doc(
        "Help centre",
        f"<h1>Help</h1><p>Your card {WEIRD_DIGITS} was charged.</p>"
        '<form action="/search"><input name="q" placeholder="Search"><button>Search</button></form>',
    )


class _Handler(BaseHTTPRequestHandler):
    pages: PagesServer

    def _answer(self, method: str) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        form = dict(parse_qsl(body, keep_blank_values=True))
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        status, text = self.pages.page(method, split.path, query, form)
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@contextmanager
def serving() -> Iterator[PagesServer]:
    server = PagesServer().start()
    try:
        yield server
    finally:
        server.stop()
