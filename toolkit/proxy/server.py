"""``ProxyServer``: a loopback HTTP server that forwards every request to the gateway (or a simulator), says
what it finds wrong with each exchange in one masked line, and records the run as gatekit's recordings do.

A client in any language records through it by taking the proxy's address as its gateway URL: a request
to ``http://127.0.0.1:PORT/api/v2/sale/1001`` goes to ``UPSTREAM/api/v2/sale/1001`` (``UPSTREAM`` is the
gateway's base URL, ``https://sandbox.example/paynet``).  Bodies and headers go as they came, but for two
things: the hop-by-hop headers, and an OAuth signature made for the proxy's URL, which the gateway would
refuse (OAuth signs the URL): the proxy re-signs it for the upstream URL when it has the key, and says so.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TextIO

import requests

from toolkit.masking import mask_text
from toolkit.operations import AuthScheme
from toolkit.proxy.checks import (
    Answer,
    Check,
    Keys,
    check_answer_of,
    check_request,
    check_signature,
    request_pairs,
    unknown_path,
)
from toolkit.proxy.orders import Orders
from toolkit.proxy.routes import Route, route
from toolkit.proxy.upstream import forwarded, upstream_session
from toolkit.recording import Recorder, RecordingRun, clear
from toolkit.signing import (
    authorization_header,
    oauth_params_from_header,
    parse_authorization_header,
    sign_hmac_sha1,
    sign_rsa_sha256,
    signature_base_string,
)
from toolkit.terminal import printable

MAX_BODY = 1 << 20  # bytes of a request body the proxy reads (a gateway request is a few kilobytes)
PROBLEM, NOTE = "  ! ", "  - "


@dataclass
class Exchange:
    """One exchange as the proxy saw it, for its line and its recording."""

    method: str
    path: str
    route: Route | None
    pairs: list[tuple[str, str]]
    checks: list[Check] = field(default_factory=list)
    status: int | None = None
    answer: Answer | None = None
    elapsed: float = 0.0
    error: str = ""

    @property
    def problems(self) -> list[Check]:
        return [check for check in self.checks if check.problem]

    def line(self, said: set[str] | None = None) -> str:
        """``12:00:01  sale 1001  200 async-response processing  38 ms  ok`` and one line per finding, masked.

        ``said``: the notes printed before; a note already in it is not printed again (it is added otherwise)."""
        what = f"{self.route.operation.name} {self.route.path_id}" if self.route else f"{self.method} {self.path}"
        if self.route and self.route.by_group:
            what = f"{self.route.operation.name} group {self.route.path_id}"
        outcome = f"{self.status} {self.answer.summary}" if self.status is not None and self.answer else ""
        outcome = outcome or (f"{self.status}" if self.status is not None else f"no answer: {self.error}")
        verdict = f"{len(self.problems)} problem{'s' * (len(self.problems) != 1)}" if self.problems else "ok"
        head = (
            f"{datetime.now().strftime('%H:%M:%S')}  {what}  {outcome.strip()}  {self.elapsed * 1000:.0f} ms  {verdict}"
        )
        lines = [head]
        for check in self.checks:
            if not check.problem and said is not None:
                if check.text in said:
                    continue
                said.add(check.text)
            lines.append((PROBLEM if check.problem else NOTE) + str(check))
        return "\n".join(printable(mask_text(line)) for line in lines)  # (each line: a path may carry \r\n)


class ProxyServer:
    """The recording proxy: ``with ProxyServer(upstream, record=folder) as proxy: ... proxy.base_url``."""

    def __init__(
        self,
        upstream: str,
        *,
        port: int = 0,
        record: Path | None = None,
        keys: Keys | None = None,
        out: TextIO | None = None,
        timeout: float = 60.0,
        profile: str = "proxy",
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.keys = keys or Keys()
        self.out = out or sys.stdout
        self.timeout = timeout
        self.session = upstream_session()
        self.orders = Orders()
        self.exchanges = 0
        self.with_problems = 0
        self._recorders: dict[str, Recorder] = {}
        self._said: set[str] = set()  # the notes printed so far: each is printed once
        self._lock = threading.Lock()
        self.run: RecordingRun | None = None
        if record is not None:
            clear(Path(record))
            self.run = RecordingRun(Path(record), profile=profile, base_url=self.upstream)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ProxyServer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="gatekit-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.session.close()

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def summary(self) -> str:
        recorded = f"; {len(self._recorders)} order(s) recorded in {self.run.folder}" if self.run else ""
        return f"{self.exchanges} exchange(s), {self.with_problems} with problems{recorded}"

    # --- one exchange ------------------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes, host: str
    ) -> tuple[int, dict[str, str], bytes]:
        """Check, forward, check the answer, print, record; the answer for the client."""
        lower = {name.lower(): value for name, value in headers.items()}
        found = route(path.split("?", 1)[0])
        upstream_url = self.upstream + path
        exchange = Exchange(method, path, found, [])
        out_headers = forwarded(headers)
        signed_with = ""
        if found is None:
            exchange.checks += unknown_path(method, path)
        else:
            exchange.pairs, exchange.checks = request_pairs(body)
            exchange.checks += check_request(found, method, lower, exchange.pairs)
            signature = check_signature(
                found, exchange.pairs, body.decode("utf-8", "replace"), lower.get("authorization"),
                client_url=f"http://{host}{path}", upstream_url=upstream_url, keys=self.keys,
            )  # fmt: skip
            exchange.checks += signature.checks
            if any(check.problem for check in signature.checks):
                signed_with = "a wrong signature"
            if signature.signed_for == "client" and f"http://{host}{path}" != upstream_url:
                exchange.checks.append(self._resign(found, exchange.pairs, out_headers, upstream_url))
        order = self.orders.name_of(dict(exchange.pairs))
        started = time.monotonic()
        answer: requests.Response | None = None
        try:
            answer = self.session.request(method, upstream_url, data=body, headers=out_headers,
                                          timeout=self.timeout, allow_redirects=False)  # fmt: skip
        except requests.RequestException as exc:
            exchange.error = mask_text(str(exc))[:300]
        exchange.elapsed = time.monotonic() - started
        if answer is not None:
            exchange.status = answer.status_code
            if found is not None:
                answered = {name.lower(): value for name, value in answer.headers.items()}
                exchange.answer = check_answer_of(
                    found.operation, dict(exchange.pairs), lower, answer.status_code, answered, answer.content
                )
                exchange.checks += exchange.answer.checks
                self.orders.learn(order, exchange.answer.fields)
        self._report(exchange)
        self._record(order, exchange, upstream_url, out_headers, answer, signed_with)
        if answer is None:
            text = f"gatekit proxy: no answer from {self.upstream}: {exchange.error}\n".encode()
            return 502, {"Content-Type": "text/plain; charset=utf-8"}, text
        return answer.status_code, forwarded(answer.headers), answer.content

    def _resign(self, found: Route, pairs: list[tuple[str, str]], headers: dict[str, str], url: str) -> Check:
        """The client signed the proxy's URL: sign the same parameters for ``url``, or say why not."""
        op = found.operation
        if not self.keys.can_sign(op.auth):
            what = "private key" if op.auth is AuthScheme.OAUTH_RSA_SHA256 else "control key"
            return Check(f"OAuth signature made for the proxy's URL: the gateway checks it against {url} and will "
                         f"refuse it (the proxy re-signs with the merchant's {what}: --profile)", False)  # fmt: skip
        name = next(n for n in headers if n.lower() == "authorization")
        params = parse_authorization_header(headers[name])
        oauth = oauth_params_from_header({"oauth_version": "1.0", **params})
        base = signature_base_string("POST", url, pairs, oauth)
        if op.auth is AuthScheme.OAUTH_RSA_SHA256 and self.keys.private_key is not None:
            signature = sign_rsa_sha256(base, self.keys.private_key)
        else:
            signature = sign_hmac_sha1(base, self.keys.control_key.reveal() if self.keys.control_key else "")
        headers[name] = authorization_header(oauth, signature, realm=params.get("realm"))
        return Check(f"OAuth signature verified for the proxy's URL and re-signed for {url}", False)

    def _report(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges += 1
            self.with_problems += bool(exchange.problems)
            print(exchange.line(self._said), file=self.out, flush=True)

    def _record(
        self,
        order: str,
        exchange: Exchange,
        url: str,
        headers: dict[str, str],
        answer: requests.Response | None,
        signed_with: str,
    ) -> None:
        if self.run is None:
            return
        with self._lock:
            recorder = self._recorders.setdefault(order, Recorder())
        recorder.exchange(
            operation=exchange.route.operation.name if exchange.route else "",
            method=exchange.method,
            url=url,
            headers=headers,
            fields=exchange.pairs,
            status=exchange.status,
            response_headers=dict(answer.headers) if answer is not None else {},
            body=answer.text if answer is not None else "",
            elapsed=exchange.elapsed,
            error=exchange.error or None,
            signed_with=signed_with,
            findings=[check.text for check in exchange.checks],
        )
        self.run.keep(order, recorder, tags=["proxy"])


def _handler_for(proxy: ProxyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "gatekit-proxy"

        def _forward(self) -> None:
            length = self.headers.get("Content-Length")
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                self._send(411, b"gatekit proxy: send a Content-Length (the gateway's clients do)\n")
                return
            size = int(length) if length and length.isdigit() else 0
            if size > MAX_BODY:
                self._send(413, f"gatekit proxy: a body above {MAX_BODY} bytes is no gateway request\n".encode())
                return
            body = self.rfile.read(size) if size else b""
            host = self.headers.get("Host") or proxy.base_url.removeprefix("http://")
            status, headers, content = proxy.handle(self.command, self.path, dict(self.headers.items()), body, host)
            self._send(status, content, headers)

        def _send(self, status: int, content: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in (headers or {"Content-Type": "text/plain; charset=utf-8"}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(content)

        do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _forward

        def log_message(self, format: str, *args: object) -> None:  # one line per exchange is printed already
            pass

    return Handler


__all__ = ["Exchange", "ProxyServer"]


def started_line(proxy: ProxyServer) -> str:
    """What ``gatekit proxy`` prints first: where to point the client, where it goes, what it checks."""
    keys = proxy.keys
    checks = "controls checked" if keys.control_key else "controls not checked (no control key)"
    oauth = "RSA-SHA256 checked" if keys.rsa_public else "RSA-SHA256 not checked (no public key)"
    record = f"; recording in {proxy.run.folder}" if proxy.run else ""
    return (f"gatekit proxy: {proxy.base_url} -> {proxy.upstream} (take {proxy.base_url} as the gateway URL)\n"
            f"gatekit proxy: {checks}; {oauth}{record}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")  # fmt: skip
