"""``ProxyServer``: a loopback HTTP server that forwards every request to the gateway (or a simulator), says
what it finds wrong with each exchange in one masked line, and records the run as gatekit's recordings do.

A client in any language records through it by taking the proxy's address as its gateway URL: a request
to ``http://127.0.0.1:PORT/api/v2/sale/1001`` goes to ``UPSTREAM/api/v2/sale/1001`` (``UPSTREAM`` is the
gateway's base URL, ``https://sandbox.example/paynet``), and nowhere else.  Bodies and headers go as they came,
but for two things: the hop-by-hop headers, and an OAuth signature made for the proxy's URL, which the gateway
would refuse (OAuth signs the URL): the proxy re-signs it for the upstream URL when it has the key, and says so.

It is a network service, built as one: ``listener`` bounds its connections and the time a client may take,
``framing`` reads requests strictly (a request never carries another), ``upstream`` holds ``--timeout`` over a
whole exchange and passes a large answer on as it comes, ``bodies`` keeps a bounded part of it (``limits``).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from toolkit.masking import mask_text
from toolkit.operations import AnswerStyle, AuthScheme
from toolkit.proxy.bodies import Body
from toolkit.proxy.checks import (
    Answer,
    Check,
    Keys,
    check_answer_of,
    check_request,
    check_signature,
    read_fields,
    request_pairs,
    unknown_path,
)
from toolkit.proxy.deadline import Deadline
from toolkit.proxy.exchange import Exchange
from toolkit.proxy.framing import Head, Refusal
from toolkit.proxy.hosted import check_hosted_answer, is_tokenize_call, tokenize_note
from toolkit.proxy.limits import Limits
from toolkit.proxy.listener import Listener
from toolkit.proxy.orders import Orders
from toolkit.proxy.recording import OrderRecording
from toolkit.proxy.refusals import refusal
from toolkit.proxy.reply import ClientGone, Reply
from toolkit.proxy.routes import Route, route
from toolkit.proxy.upstream import Answer as Upstreamed
from toolkit.proxy.upstream import Upstream, UpstreamError, UpstreamTimeout, forwarded
from toolkit.recording import RecordingRun, clear
from toolkit.signing import (
    authorization_header,
    oauth_params_from_header,
    parse_authorization_header,
    sign_hmac_sha1,
    sign_rsa_sha256,
    signature_base_string,
)
from toolkit.wire import content_type_problem

Headers = list[tuple[str, str]]


class ProxyServer:
    """The recording proxy: ``with ProxyServer(upstream, record=folder) as proxy: ... proxy.base_url``.

    ValueError for an upstream URL that is not one (``http(s)://host[/path]``), OSError for a port taken."""

    def __init__(
        self,
        upstream: str,
        *,
        port: int = 0,
        record: Path | None = None,
        keys: Keys | None = None,
        out: TextIO | None = None,
        limits: Limits | None = None,
        profile: str = "proxy",
    ) -> None:
        self.limits = limits or Limits()
        self.gateway = Upstream(upstream)
        self.upstream = self.gateway.url
        self.keys = keys or Keys()
        self.out = out or sys.stdout
        self.orders = Orders()
        self.exchanges = 0
        self.with_problems = 0
        self._recorders: dict[str, OrderRecording] = {}
        self._said: set[str] = set()  # the notes printed so far: each is printed once
        self._lock = threading.Lock()
        self.run: RecordingRun | None = None
        self._listener = Listener(self, self.limits, port=port)
        if record is not None:
            clear(Path(record))
            self.run = RecordingRun(Path(record), profile=profile, base_url=self.upstream)

    @property
    def base_url(self) -> str:
        host, port = self._listener.address
        return f"http://{host}:{port}"

    @property
    def open_connections(self) -> int:
        """Client connections served now (a thread each)."""
        return self._listener.open_connections

    def start(self) -> ProxyServer:
        self._listener.start()
        return self

    def stop(self) -> None:
        self._listener.stop()
        self.gateway.close()

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def summary(self) -> str:
        recorded = f"; {len(self._recorders)} order(s) recorded in {self.run.folder}" if self.run else ""
        busy, slow = self._listener.turned_away, self._listener.too_slow
        turned = f"; {busy} connection(s) turned away (--max-connections)" if busy else ""
        late = f"; {slow} request(s) not received in time (--request-timeout)" if slow else ""
        return f"{self.exchanges} exchange(s), {self.with_problems} with problems{recorded}{turned}{late}"

    # --- what the listener hands over (``listener.Service``) ------------------------------------------------

    def serve(self, head: Head, body: bytes, reply: Reply) -> None:
        """Check, forward, pass the answer on, check it, print, record."""
        exchange = self._prepare(head, body)
        started = time.monotonic()
        try:
            answer = self.gateway.send(head.method, head.target, exchange.headers, body, Deadline(self.limits.timeout))
        except UpstreamError as exc:
            self._no_answer(exchange, head, reply, exc, time.monotonic() - started)
            return
        with contextlib.closing(answer):
            kept, spilled = Body(self.limits.kept_body), b""  # (spilled: the end of the read that filled ``kept``)
            try:
                while not answer.complete and not kept.full:
                    spilled = kept.add(answer.read())
            except UpstreamError as exc:
                after = f" (after HTTP {answer.status} and {kept.size} bytes)"
                self._no_answer(exchange, head, reply, exc, time.monotonic() - started, after)
                return
            exchange.status, exchange.body = answer.status, kept
            if answer.complete:  # (kept whole: checked, printed and recorded before the client has it)
                answer.close()
                exchange.elapsed = time.monotonic() - started
                self._conclude(exchange, head, answer)
                self._pass_whole(head, answer, kept, reply)
                return
            try:
                self._stream(exchange, answer, bytes(kept.kept) + spilled, reply)
            finally:
                answer.close()
                exchange.elapsed = time.monotonic() - started
                self._conclude(exchange, head, answer)

    def refuse(self, head: Head | None, refused: Refusal, reply: Reply) -> None:
        """A request ``framing`` refused: one line (a problem of the client's), the answer, the connection closed."""
        target = head.target if head else ""
        exchange = Exchange(head.method if head else "-", target or "(request line unread)", route(target), [])
        exchange.status = refused.status
        exchange.error = "refused by the proxy, not forwarded"
        exchange.checks.append(Check(refused.message))
        self._report(exchange)
        self._answer_itself(head, reply, refused.status, refused.message)

    def failed(self, error: Exception) -> None:
        text = mask_text(f"{error.__class__.__name__}: {error}")[:300]
        with self._lock:
            print(f"gatekit proxy: unexpected {text} (a bug of gatekit: please report it)", file=self.out, flush=True)

    # --- one exchange ---------------------------------------------------------------------------------------

    def _prepare(self, head: Head, body: bytes) -> Exchange:
        """The exchange with its request checked, its order named, and the headers to forward (re-signed when the
        client signed the proxy's URL)."""
        lower = {name.lower(): value for name, value in head.fields}
        found = route(head.target.split("?", 1)[0])
        upstream_url = self.gateway.url_for(head.target)
        exchange = Exchange(head.method, head.target, found, [], headers=forwarded(head.fields, request=True))
        if found is None:
            tokenize = is_tokenize_call(head.target)  # (the SDK's call: not a merchant's, not an operation)
            exchange.checks += [tokenize_note()] if tokenize else unknown_path(head.method, head.target)
            exchange.order = self.orders.name_of({})
            return exchange
        if content_type_problem(lower.get("content-type", "")):  # (no form: the gateway reads no field of it)
            exchange.sent_text = body.decode("utf-8", "replace")
        else:
            exchange.pairs, exchange.checks = request_pairs(body)
        exchange.order = self.orders.name_of(read_fields(exchange.pairs))
        exchange.checks += check_request(found, head.method, lower, exchange.pairs)
        if exchange.sent_text:
            return exchange
        client_url = f"http://{lower.get('host') or self.base_url.removeprefix('http://')}{head.target}"
        signature = check_signature(
            found, exchange.pairs, body.decode("utf-8", "replace"), lower.get("authorization"),
            client_url=client_url, upstream_url=upstream_url, keys=self.keys,
        )  # fmt: skip
        exchange.checks += signature.checks
        if any(check.problem for check in signature.checks):
            exchange.signed_with = "a wrong signature"
        if signature.signed_for == "client" and client_url != upstream_url:
            exchange.checks.append(self._resign(found, exchange.pairs, exchange.headers, upstream_url))
        return exchange

    def _no_answer(
        self, exchange: Exchange, head: Head, reply: Reply, exc: UpstreamError, elapsed: float, after: str = ""
    ) -> None:
        """No (whole) answer, and nothing of it sent yet: recorded so, and the client told (504 for a timeout)."""
        exchange.error, exchange.elapsed = f"{exc}{after}", elapsed
        self._conclude(exchange, head, None)
        self._answer_itself(head, reply, 504 if isinstance(exc, UpstreamTimeout) else 502, exchange.error)

    @staticmethod
    def _pass_whole(head: Head, answer: Upstreamed, kept: Body, reply: Reply) -> None:
        if head.method == "HEAD":  # (the gateway's Content-Length: that of the body a GET would get)
            reply.start(answer.status, forwarded(answer.headers, request=False), answer.length)
        else:
            reply.send(answer.status, forwarded(answer.headers, request=False), bytes(kept.kept))

    def _stream(self, exchange: Exchange, answer: Upstreamed, first: bytes, reply: Reply) -> None:
        """An answer larger than what is kept: ``first`` (what came so far), then the rest as it comes.  Cut
        short, the connection says so by closing (a Content-Length not reached, or chunks without their last)."""
        kept = exchange.body
        assert kept is not None
        reply.start(answer.status, forwarded(answer.headers, request=False), answer.length)
        try:
            reply.write(first)
            while data := answer.read():
                kept.add(data)
                reply.write(data)
            reply.end()
        except UpstreamError as exc:
            reply.keep_alive = False
            exchange.error = f"{exc}: the answer was cut after {kept.size} bytes"
        except ClientGone:
            exchange.checks.append(Check(f"the client went away after {reply.sent} bytes of the answer", False))

    def _check_answer(self, exchange: Exchange, head: Head, answer: Upstreamed) -> None:
        kept = exchange.body
        if exchange.route is None or kept is None:
            return
        if kept.full:
            checks = [Check(f"HTTP {answer.status}: an answer of {kept.size} bytes is no gateway answer")]
            exchange.answer = Answer({}, checks)
        else:
            lower = {name.lower(): value for name, value in head.fields}
            answered = {name.lower(): value for name, value in answer.headers}
            op = exchange.route.operation
            check = check_hosted_answer if op.answers is AnswerStyle.HOSTED_FIELDS else check_answer_of
            exchange.answer = check(op, read_fields(exchange.pairs), lower, answer.status, answered, bytes(kept.kept))
            self.orders.learn(exchange.order, exchange.answer.fields)
        exchange.checks += exchange.answer.checks

    def _answer_itself(self, head: Head | None, reply: Reply, status: int, message: str) -> None:
        headers, body = refusal(message, path=head.target if head else "", accept=head.get("accept") if head else "")
        reply.keep_alive = reply.keep_alive and status in (502, 504)  # (a refused request's connection is closed)
        reply.send(status, headers, body)

    def _resign(self, found: Route, pairs: list[tuple[str, str]], headers: Headers, url: str) -> Check:
        """The client signed the proxy's URL: sign the same parameters for ``url``, or say why not."""
        index = next(i for i, (name, _) in enumerate(headers) if name.lower() == "authorization")
        name, value = headers[index]
        params = parse_authorization_header(value)
        scheme = found.operation.oauth_scheme(params.get("oauth_signature_method", "")) or found.operation.auth
        if not self.keys.can_sign(scheme):
            what = "private key" if scheme is AuthScheme.OAUTH_RSA_SHA256 else "control key"
            return Check(f"OAuth signature made for the proxy's URL: the gateway checks it against {url} and will "
                         f"refuse it (the proxy re-signs with the merchant's {what}: --profile)", False)  # fmt: skip
        oauth = oauth_params_from_header({"oauth_version": "1.0", **params})
        base = signature_base_string("POST", url, pairs, oauth)
        if scheme is AuthScheme.OAUTH_RSA_SHA256 and self.keys.private_key is not None:
            signature = sign_rsa_sha256(base, self.keys.private_key)
        else:
            signature = sign_hmac_sha1(base, self.keys.control_key.reveal() if self.keys.control_key else "")
        headers[index] = (name, authorization_header(oauth, signature, realm=params.get("realm")))
        return Check(f"OAuth signature verified for the proxy's URL and re-signed for {url}", False)

    def _conclude(self, exchange: Exchange, head: Head, answer: Upstreamed | None) -> None:
        """The answer checked, the exchange's line printed and its recording written."""
        if answer is not None:
            self._check_answer(exchange, head, answer)
        self._report(exchange)
        if self.run is None:
            return
        with self._lock:
            order = self._recorders.setdefault(exchange.order, OrderRecording())
        order.add(exchange, self.gateway.url_for(exchange.path), answer.headers if answer is not None else None)
        self.run.keep(exchange.order, order.recorder, tags=["proxy"])

    def _report(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges += 1
            self.with_problems += bool(exchange.problems)
            print(exchange.line(self._said), file=self.out, flush=True)


def started_line(proxy: ProxyServer) -> str:
    """What ``gatekit proxy`` prints first: where to point the client, where it goes, what it checks."""
    keys = proxy.keys
    checks = "controls checked" if keys.control_key else "controls not checked (no control key)"
    oauth = "RSA-SHA256 checked" if keys.rsa_public else "RSA-SHA256 not checked (no public key)"
    record = f"; recording in {proxy.run.folder}" if proxy.run else ""
    return (f"gatekit proxy: {proxy.base_url} -> {proxy.upstream} (take {proxy.base_url} as the gateway URL)\n"
            f"gatekit proxy: {checks}; {oauth}{record}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")  # fmt: skip


__all__ = ["Exchange", "ProxyServer", "started_line"]
