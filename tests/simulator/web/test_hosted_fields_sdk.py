"""Hosted Fields' browser half (hosted-fields.md sections 2, 4, 5 and 12 points 1-2): the SDK and the card fields the
simulator serves from its own origin (``web.hosted_fields_pages``).

Over HTTP: the addresses, media types and caching, and no inline script or style in any document (parsed).  In
headless Chromium: a merchant's checkout on another origin (``hosted_fields_merchant/``, served under the
examples' Content-Security-Policy built from the simulator's origin) loads the SDK; the payer types a card into
the iframes and the page gets a token, or the refusal of a mistyped number; the container classes follow focus
and input; the style bag passes the allowlist; and Chromium reports no CSP violation.  The ticket comes from the
simulator's ``create-ephemeral-ticket``, asked for on every page load as the examples' servers do.

Chromium comes from Debian (``make`` installs it); without it, or with GATEKIT_BROWSER=off, the browser tests are
skipped and say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import tomllib
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from toolkit.client import GatewayClient
from toolkit.simulator import SimulatorServer
from toolkit.simulator.web import hosted_fields_pages as hf

SDK_URL = "/sdk/hosted-fields/latest/index.js?segment=paynet"
OLDER_SDK_URL = "/assets/libs/hosted-fields/latest/index.js"
MERCHANT_FILES = Path(__file__).parent / "hosted_fields_merchant"
ROOT = Path(__file__).resolve().parents[3]
WAIT = 15.0


# --- over HTTP ------------------------------------------------------------------------------------------------


class Inline(HTMLParser):
    """What a strict Content-Security-Policy would refuse in a document: inline scripts, styles, handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.refused: list[str] = []
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {name: value or "" for name, value in attrs}
        self.tags.append((tag, named))
        self._open = tag if tag in ("script", "style") else None
        if tag == "style":
            self.refused.append("a <style> element")
        if tag == "script" and not named.get("src"):
            self.refused.append("a <script> without src")
        self.refused += [f"<{tag} {name}=...>" for name in named if name == "style" or name.startswith("on")]
        self.refused += [f"<{tag} {name}=javascript:>" for name, value in named.items()
                         if value.strip().lower().startswith("javascript:")]  # fmt: skip

    def handle_data(self, data: str) -> None:
        if self._open and data.strip():
            self.refused.append(f"text inside <{self._open}>")

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def parsed(html: str) -> Inline:
    parser = Inline()
    parser.feed(html)
    return parser


@pytest.mark.parametrize("path", [SDK_URL, OLDER_SDK_URL], ids=["sdk", "assets-libs"])
def test_the_sdk_is_served_at_both_addresses_with_its_rules_written_in(server: SimulatorServer, path: str):
    answer = requests.get(server.root_url + path, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/javascript; charset=utf-8"
    assert answer.headers["cache-control"] == "no-cache" and answer.headers["etag"]
    assert "window.onHostedFieldsReady(HostedFields)" in answer.text
    assert hf.RULES_MARK not in answer.text and hf.rules_json() in answer.text
    assert answer.content == requests.get(server.root_url + SDK_URL, timeout=10).content


def test_an_unchanged_file_is_a_304_and_another_version_is_not_there(server: SimulatorServer):
    first = requests.get(server.root_url + "/hf/field.js", timeout=10)
    again = requests.get(server.root_url + "/hf/field.js", headers={"If-None-Match": first.headers["etag"]}, timeout=10)
    assert (again.status_code, again.content) == (304, b"")
    assert requests.get(server.root_url + "/sdk/hosted-fields/1.0.0/index.js", timeout=10).status_code == 404


@pytest.mark.parametrize("path, media_type", [("/hf/field.js", "text/javascript"), ("/hf/field.css", "text/css")],
                         ids=["script", "style"])  # fmt: skip
def test_the_fields_own_files(server: SimulatorServer, path: str, media_type: str):
    answer = requests.get(server.root_url + path, timeout=10)
    assert answer.status_code == 200 and answer.headers["content-type"] == f"{media_type}; charset=utf-8"
    assert answer.headers["x-content-type-options"] == "nosniff" and hf.RULES_MARK not in answer.text


@pytest.mark.parametrize("kind", sorted(hf.FIELD_TYPES))
def test_each_field_is_a_document_with_one_input_and_nothing_inline(server: SimulatorServer, kind: str):
    answer = requests.get(f"{server.root_url}/hf/{kind}", params={"id": "box", "placeholder": "Type here"}, timeout=10)
    assert answer.status_code == 200 and answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["content-security-policy"] == hf.FIELD_POLICY
    page = parsed(answer.text)
    assert page.refused == []
    inputs = [attrs for tag, attrs in page.tags if tag == "input"]
    assert len(inputs) == 1 and inputs[0]["id"] == "value" and inputs[0]["type"] == "text"
    assert (inputs[0]["data-hf-id"], inputs[0]["data-hf-type"], inputs[0]["placeholder"]) == ("box", kind, "Type here")
    assert ("script", {"src": "field.js", "defer": ""}) in page.tags
    assert ("link", {"rel": "stylesheet", "href": "field.css"}) in page.tags


def test_a_field_keeps_what_the_page_gave_it_as_text(server: SimulatorServer):
    hostile = '"><script>alert(1)</script>'
    answer = requests.get(f"{server.root_url}/hf/pan", params={"id": hostile, "placeholder": hostile}, timeout=10)
    page = parsed(answer.text)
    assert page.refused == [] and [tag for tag, _ in page.tags].count("script") == 1
    (field,) = (attrs for tag, attrs in page.tags if tag == "input")
    assert field["data-hf-id"] == hostile and field["placeholder"] == hostile


@pytest.mark.parametrize("path, status", [("/hf/name", 404), ("/hf/pan", 400), (f"/hf/pan?id={'x' * 201}", 400)],
                         ids=["unknown-type", "no-id", "long-id"])  # fmt: skip
def test_a_field_that_cannot_be_made_is_refused(server: SimulatorServer, path: str, status: int):
    assert requests.get(server.root_url + path, timeout=10).status_code == status


def test_the_allowlist_takes_what_the_examples_send_and_no_url():
    """Section 4: the properties the examples' pages send must survive; url() and rule syntax never do."""
    sent = {"color", "backgroundColor", "caretColor", "fontFamily", "fontSize", "fontWeight", "fontVariantNumeric",
            "letterSpacing", "lineHeight", "textAlign", "padding", "border", "outline", "transition"}  # fmt: skip
    assert sent <= set(hf.STYLE_ALLOWLIST["input"]) and sent <= set(hf.STYLE_ALLOWLIST["focus"])
    assert {"color", "fontWeight", "letterSpacing"} <= set(hf.STYLE_ALLOWLIST["placeholder"])
    refused = re.compile(hf.FORBIDDEN_VALUE, re.IGNORECASE)
    for value in ('-apple-system, "Segoe UI", Roboto', "color 160ms cubic-bezier(0.4, 0, 0.2, 1)", "0 14px",
                  "rgba(52, 139, 255, 0.28)", "tabular-nums"):  # fmt: skip
        assert refused.search(value) is None, value
    for value in ("url(https://evil.example/x.png)", "URL (x)", "red; position: absolute", "}body{", "@import x",
                  "expression(alert(1))", "red /* */"):  # fmt: skip
        assert refused.search(value) is not None, value


def test_the_sdk_files_are_package_data_of_the_wheel():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["toolkit"]
    files = sorted((ROOT / "toolkit/simulator/web/hosted_fields_sdk").iterdir())
    shipped = [path.name for path in files if any(path.relative_to(ROOT / "toolkit").match(p) for p in patterns)]
    assert shipped == [path.name for path in files] and len(files) == 4


# --- in Chromium: a merchant page on another origin -------------------------------------------------------------


def examples_policy(sdk_origin: str) -> str:
    """The Content-Security-Policy every example sends (section 2), built from the SDK's origin."""
    return (f"default-src 'none'; script-src 'self' {sdk_origin}; style-src 'self'; frame-src {sdk_origin}; "
            f"connect-src 'self' {sdk_origin}; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")  # fmt: skip


class MerchantSite:
    """The merchant's checkout on 127.0.0.1 and a port of its own: its files, and ``config.js`` made on each load
    with a fresh ticket (``new_ticket``), every answer under the examples' policy."""

    def __init__(self, sdk_root: str, endpoint_id: str, new_ticket: Callable[[], str]) -> None:
        self.sdk_root = sdk_root
        self.endpoint_id = endpoint_id
        self.new_ticket = new_ticket
        self.options: dict[str, Any] = {}  # what the next config.js adds (readyDelay)
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                name = self.path.split("?")[0].lstrip("/") or "checkout.html"
                if name == "config.js":
                    site.answer(self, 200, "text/javascript", f"window.CONFIG = {json.dumps(site.config())};")
                elif name in ("checkout.html", "checkout.js", "styles.css"):
                    kind = {"html": "text/html", "js": "text/javascript", "css": "text/css"}[name.rpartition(".")[2]]
                    site.answer(self, 200, kind, (MERCHANT_FILES / name).read_text())
                else:
                    site.answer(self, 404, "text/plain", "not here")

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def config(self) -> dict[str, Any]:
        try:
            ticket: dict[str, str] = {"ephemeralTicket": self.new_ticket()}
        except Exception as exc:  # as the examples do: the page says it could not be prepared
            ticket = {"error": f"{exc.__class__.__name__}: {exc}"}
        return {"sdkUrl": self.sdk_root + SDK_URL, "endpointId": self.endpoint_id, **ticket, **self.options}

    def answer(self, handler: BaseHTTPRequestHandler, status: int, kind: str, text: str) -> None:
        body = text.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", f"{kind}; charset=utf-8")
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("Cache-Control", "no-store")
        handler.send_header("Content-Security-Policy", examples_policy(self.sdk_root))
        handler.end_headers()
        handler.wfile.write(body)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    if os.environ.get("GATEKIT_BROWSER") == "off":
        pytest.skip("GATEKIT_BROWSER=off")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    from toolkit.payer.browser import CHROMIUM_FLAGS, BrowserUnavailable, find_browser

    try:
        chromium, chromedriver = find_browser()
    except BrowserUnavailable as exc:
        pytest.skip(str(exc))
    profile = tempfile.mkdtemp(prefix="gatekit-hf-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console: warnings and CSP reports
    browser = webdriver.Chrome(service=Service(chromedriver), options=options)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def site(server: SimulatorServer, client: GatewayClient) -> Iterator[MerchantSite]:
    def new_ticket() -> str:
        return client.create_ephemeral_ticket().ephemeral_ticket

    endpoint_id = server.client_config().endpoint_id or ""
    merchant = MerchantSite(server.root_url, endpoint_id, new_ticket)
    yield merchant
    merchant.close()


def wait_for(driver: Any, script: str, what: str) -> Any:
    """The value of ``script`` (an expression in the page) once it is truthy."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.05).until(lambda d: d.execute_script(f"return {script};"))
    except TimeoutException:
        state = driver.execute_script("return JSON.stringify(window.HF || null)")
        pytest.fail(f"{what}: not within {WAIT} s (window.HF = {state}; console: {console(driver)})")


def open_checkout(driver: Any, site: MerchantSite, **options: Any) -> None:
    site.options = options
    driver.get(site.url)
    wait_for(driver, "window.HF && HF.ready === 1", "onReady")


def console(driver: Any) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser")]


def csp_reports(driver: Any, logged: list[str]) -> list[str]:
    """Every CSP violation: in Chromium's console (the frames' too) and as the merchant page saw them."""
    found = [message for message in logged if "Content Security Policy" in message or "Refused to" in message]
    return found + list(driver.execute_script("return window.HF ? HF.violations : []"))


def type_into(driver: Any, container: str, text: str, *, clear: bool = False) -> str:
    """Type as the payer does, inside the container's iframe; what the field shows then."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, f"#{container} iframe"))
    try:
        field = driver.find_element(By.ID, "value")
        field.click()  # (with no text: the payer only moves into the field)
        if clear:
            field.send_keys(Keys.CONTROL, "a")
            field.send_keys(Keys.DELETE)
        if text:
            field.send_keys(text)
        return str(field.get_attribute("value"))
    finally:
        driver.switch_to.default_content()


def classes(driver: Any, container: str) -> set[str]:
    return set(driver.execute_script(f"return Array.from(document.getElementById('{container}').classList);"))


def pay(driver: Any) -> dict[str, Any]:
    driver.find_element("id", "pay").click()
    wait_for(driver, "HF.tokens.length + HF.errors.length", "onToken or onError")
    return dict(driver.execute_script("return {tokens: HF.tokens, errors: HF.errors};"))


def test_a_card_typed_into_the_iframes_becomes_a_token(driver: Any, site: MerchantSite, server: SimulatorServer):
    open_checkout(driver, site)
    frames = driver.execute_script(
        "return ['cardNumber', 'expiryDate', 'cvv'].map(function (id) {"
        "  var box = document.getElementById(id); return [box.children.length, box.firstChild.src]; });"
    )
    assert [count for count, _ in frames] == [1, 1, 1]
    fields = [f"{server.root_url}/hf/{kind}" for kind in ("pan", "exp", "cvv")]
    assert [src.split("?")[0] for _, src in frames] == fields
    assert type_into(driver, "cardNumber", "4444444444444448") == "4444 4444 4444 4448"
    assert type_into(driver, "expiryDate", "1230") == "12/30"
    assert type_into(driver, "cvv", "123") == "123"
    outcome = pay(driver)
    assert outcome["errors"] == [], outcome
    (token,) = outcome["tokens"]
    assert isinstance(token, str) and token
    assert csp_reports(driver, console(driver)) == []


def test_the_containers_show_focus_and_a_filled_field_by_their_classes(driver: Any, site: MerchantSite):
    open_checkout(driver, site)
    type_into(driver, "cardNumber", "4")
    wait_for(driver, "document.getElementById('cardNumber').classList.contains('hf-field--filled')", "filled")
    assert classes(driver, "cardNumber") == {"hf-field", "hf-field--focus", "hf-field--filled"}
    type_into(driver, "expiryDate", "")  # the payer moves on: a click into the expiry
    wait_for(driver, "document.getElementById('expiryDate').classList.contains('hf-field--focus')", "focus moved")
    wait_for(driver, "!document.getElementById('cardNumber').classList.contains('hf-field--focus')", "blur")
    assert classes(driver, "cardNumber") == {"hf-field", "hf-field--filled"}
    type_into(driver, "cardNumber", "", clear=True)
    wait_for(driver, "!document.getElementById('cardNumber').classList.contains('hf-field--filled')", "emptied")
    wait_for(driver, "!document.getElementById('expiryDate').classList.contains('hf-field--focus')", "blur again")
    assert classes(driver, "expiryDate") == {"hf-field"}
    assert csp_reports(driver, console(driver)) == []


def test_a_mistyped_card_number_is_refused_with_4004_on_the_card_number(driver: Any, site: MerchantSite):
    open_checkout(driver, site)
    type_into(driver, "cardNumber", "4444 4444 44")
    type_into(driver, "expiryDate", "12/30")
    type_into(driver, "cvv", "123")
    outcome = pay(driver)
    assert outcome["tokens"] == []
    (error,) = outcome["errors"]
    assert (error["code"], error["field"]) == (4004, "cardNumber") and error["payerMessage"], error
    assert "hf-field--error" in classes(driver, "cardNumber") and "hf-field--error" not in classes(driver, "cvv")
    type_into(driver, "cardNumber", "8")  # the payer corrects the number
    wait_for(driver, "!document.getElementById('cardNumber').classList.contains('hf-field--error')", "error cleared")
    assert csp_reports(driver, console(driver)) == []


def test_a_disguised_field_keeps_the_card_in_its_iframe(driver: Any, site: MerchantSite):
    """Section 4: "the SDK rejects" a hidden or covered card field; here before anything is sent, so the ticket is
    still good once the page is fixed."""
    open_checkout(driver, site)
    type_into(driver, "cardNumber", "4444 4444 4444 4448")
    type_into(driver, "expiryDate", "12/30")
    type_into(driver, "cvv", "123")
    disguises = {
        "opacity": "document.getElementById('cvv').style.opacity = '0.5';",
        "overlay": "var cover = document.createElement('div'); cover.id = 'cover'; var box ="
        " document.getElementById('cardNumber').getBoundingClientRect(); cover.style.position = 'fixed';"
        " cover.style.left = box.left + 'px'; cover.style.top = box.top + 'px'; cover.style.width = box.width + 'px';"
        " cover.style.height = box.height + 'px'; document.body.appendChild(cover);",
    }
    undo = "document.getElementById('cvv').style.opacity = ''; document.getElementById('cover')?.remove();"
    for disguise, script in disguises.items():
        driver.execute_script(script + "HF.sdk.tokenize(CONFIG.ephemeralTicket);")
        (error,) = wait_for(driver, "HF.errors.length && HF.errors", f"the {disguise} refused")
        assert error["code"] == hf.SDK_ERRORS["disguised"][0] and disguise[:4] in error["message"], error
        driver.execute_script(undo + "HF.errors = [];")
    outcome = pay(driver)
    assert outcome["errors"] == [] and len(outcome["tokens"]) == 1, outcome
    assert csp_reports(driver, console(driver)) == []


STYLE_SEEN = (
    "var input = document.getElementById('value'), seen = getComputedStyle(input);"
    "return {color: seen.color, lineHeight: seen.lineHeight, position: seen.position,"
    "        backgroundImage: seen.backgroundImage, placeholder: getComputedStyle(input, '::placeholder').color};"
)


def field_style(driver: Any, container: str, color: str, *, focus: bool = False) -> dict[str, str]:
    """The computed style of the field's input once its colour is ``color`` (the style arrives by a message)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    seen: dict[str, str] = {}

    def arrived(d: Any) -> bool:
        seen.update(d.execute_script(STYLE_SEEN))
        return seen["color"] == color

    driver.switch_to.frame(driver.find_element(By.CSS_SELECTOR, f"#{container} iframe"))
    try:
        if focus:
            driver.find_element(By.ID, "value").click()
        WebDriverWait(driver, WAIT, poll_frequency=0.05).until(arrived)
    except TimeoutException:
        pytest.fail(f"#{container}'s input never had color {color}: {seen}")
    finally:
        driver.switch_to.default_content()
    return seen


def test_the_style_bag_passes_the_allowlist_and_the_rest_is_dropped_with_a_warning(driver: Any, site: MerchantSite):
    open_checkout(driver, site)
    assert field_style(driver, "cvv", "rgb(10, 11, 12)") == {
        "color": "rgb(10, 11, 12)", "lineHeight": "42px", "position": "static", "backgroundImage": "none",
        "placeholder": "rgb(105, 116, 122)"}  # fmt: skip
    field_style(driver, "cvv", "rgb(200, 0, 0)", focus=True)  # the focus part, merged over the input part
    console(driver)
    driver.execute_script(
        "HF.sdk.setStyle('cvv', {input: {color: 'rgb(0, 128, 0)', position: 'absolute',"
        "  backgroundColor: 'url(https://evil.example/x.png)'}, '@media (min-width: 1px)': {input: {}}});"
    )
    logged = console(driver)
    warned = [message for message in logged if "[HostedFields]" in message]
    assert len(warned) == 3 and all(w in " ".join(warned) for w in ("position", "backgroundColor", "@media")), logged
    driver.find_element("id", "email").click()
    seen = field_style(driver, "cvv", "rgb(0, 128, 0)")
    assert (seen["position"], seen["backgroundImage"]) == ("static", "none")
    assert csp_reports(driver, logged + console(driver)) == []


def test_the_sdk_waits_for_a_ready_callback_assigned_late(driver: Any, site: MerchantSite):
    open_checkout(driver, site, readyDelay=1500)
    assert driver.execute_script("return document.querySelectorAll('.hf-field iframe').length") == 3
    assert csp_reports(driver, console(driver)) == []


def test_destroy_takes_the_fields_and_their_classes_away(driver: Any, site: MerchantSite):
    open_checkout(driver, site)
    type_into(driver, "cardNumber", "4")
    wait_for(driver, "document.getElementById('cardNumber').classList.contains('hf-field--filled')", "filled")
    driver.execute_script("HF.sdk.destroy(); HF.sdk.tokenize(CONFIG.ephemeralTicket);")
    (error,) = wait_for(driver, "HF.errors.length && HF.errors", "tokenize after destroy refused")
    assert error["code"] == hf.SDK_ERRORS["not_ready"][0]
    assert driver.execute_script("return document.querySelectorAll('.hf-field iframe').length") == 0
    assert classes(driver, "cardNumber") == {"hf-field"}
    assert csp_reports(driver, console(driver)) == []


def test_the_sdk_refuses_to_run_in_a_page_of_its_own_origin(driver: Any, server: SimulatorServer):
    """Section 2: "The SDK refuses to run when it is served from the merchant origin" (here: a field document)."""
    driver.get(f"{server.root_url}/hf/pan?id=x")
    driver.execute_script(
        "var box = document.createElement('div'); box.id = 'cardNumber'; document.body.appendChild(box);"
        "window.onHostedFieldsReady = function (HostedFields) {"
        "  HostedFields.init({endpointId: '1', fields: {cardNumber: {type: 'pan'}},"
        "                     onError: function (error) { window.REFUSED = error; }}); };"
        "var script = document.createElement('script'); script.src = arguments[0]; document.head.appendChild(script);",
        server.root_url + SDK_URL,
    )
    refused = wait_for(driver, "window.REFUSED", "the refusal")
    assert refused["code"] == hf.SDK_ERRORS["merchant_origin"][0]
    assert driver.execute_script("return document.getElementById('cardNumber').children.length") == 0
    assert csp_reports(driver, console(driver)) == []
