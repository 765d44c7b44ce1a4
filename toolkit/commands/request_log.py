"""One line per request that ``gatekit simulate`` serves (``--quiet`` turns it off), card data masked.

    10:42:07.113 POST /paynet/api/v2/sale/1001 sale 200 async-response orderid=8056020 3 ms

The time, the method and path, the operation (the route: a catalogue operation, a page, a
control call), the HTTP status, the ``type`` and ``paynet-order-id`` of a gateway answer, and how
long the simulator took; control characters escaped (``toolkit.terminal``: a path from a web page cannot
write escape sequences or a forged line into the terminal).  An ASGI middleware that the command puts
around the simulator's app: the simulator itself, its tests and ``gatekit certify`` never run it.

It costs next to nothing on the request's path: the answer's ``type`` and order come from what the gateway
route already computed (``ANSWER_KEY`` in the ASGI scope; a body is decoded only for the few answers made
elsewhere), directly around the gateway's front door (as ``gatekit simulate`` puts it) the status too, so that
nothing watches what is sent; the request puts a tuple on a bounded queue and never waits, and ``LineWriter``'s
thread formats, masks and writes the lines in batches: one write and one flush per batch (a terminal sees each
batch at once; a file or a pipe gets them in batches of up to ``LineWriter.BATCH`` lines under load).  When
the output cannot keep up, the oldest waiting lines are dropped and a line says how many.
"""

from __future__ import annotations

import collections
import functools
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from toolkit.masking import mask_path
from toolkit.simulator.web.render import ANSWER_SCOPE_KEY, SENT_SCOPE_KEY
from toolkit.terminal import printable
from toolkit.wire import DecodeError, decode_response

MAX_BODY = 64 * 1024  # gateway answers are small
API = "/api/"  # the gateway's operations (JSON or the legacy key=value form); pages and /_sim/ are not decoded
ANSWER_KEY = ANSWER_SCOPE_KEY  # scope key: (type, paynet-order-id) of a gateway answer, set by the route

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]
# what a request leaves for the writer: wall time, method, path, operation, status, type, orderid, seconds
Entry = tuple[float, str, str, str, int, str, str, float]


class _Answer:
    """What the app sent back: the status, and the body when it is a gateway answer the route did not describe."""

    __slots__ = ("body", "decode", "status")

    def __init__(self, decode: bool) -> None:
        self.status = 0
        self.decode = decode
        self.body = bytearray()

    def see(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        elif message["type"] == "http.response.body" and self.decode and len(self.body) < MAX_BODY:
            self.body += message.get("body", b"")

    def fields(self) -> dict[str, str]:
        if not self.body or len(self.body) >= MAX_BODY:
            return {}
        try:
            return decode_response(bytes(self.body))
        except DecodeError:
            return {}


def operation(scope: Scope) -> str:
    """The route that answered: its endpoint's name (a catalogue operation for the gateway API)."""
    endpoint = scope.get("endpoint")
    name = getattr(endpoint, "__name__", "") or "-"
    return name.removesuffix("_group")


def format_line(entry: Entry) -> str:
    """The line of one request.  Only what came from outside is masked and escaped: the path (a card number
    typed into it, a control character); the time, operation, status, type and order are the simulator's own."""
    at, method, path, op, status, kind, orderid, seconds = entry
    second = int(at)
    stamp = f"{_clock(second)}.{min(999, int((at - second) * 1000 + 0.5)):03d}"
    return (f"{stamp} {printable(method)} {printable(mask_path(path))} {op} {status or '-'} {kind or '-'} "
            f"orderid={orderid or '-'} {seconds * 1000:.0f} ms")  # fmt: skip


@functools.lru_cache(maxsize=4)
def _clock(second: int) -> str:
    return time.strftime("%H:%M:%S", time.localtime(second))


def _described(scope: Scope, answer: _Answer) -> tuple[str, str]:
    described = scope.get(ANSWER_KEY)
    if described is not None:
        return described  # type: ignore[no-any-return]
    fields = answer.fields()
    return fields.get("type", ""), fields.get("paynet-order-id", "")


class LineWriter:
    """The lines of the requests, written by a thread of its own in batches (``put`` never blocks a request)."""

    BATCH = 512  # lines per write at most
    # Seconds the writer lets lines gather once one comes: a wake-up per line (the GIL handed over and back, a
    # write) cost a busy simulator ~40 us a request.  At 20 ms, a busy simulator's writer wakes about 4 times
    # less than at 5 ms and spends about half the CPU per line (3 us a line less); at 50 ms, a third less again
    # (4.6-4.7 -> 3.1 us a line, statuses and sales on one connection); 50 ms later is still at once for a person
    # reading
    GATHER = 0.05
    MAX_WAITING = 100_000  # lines waiting at most; beyond, the oldest are dropped (and counted)

    def __init__(self, stream: TextIO | None = None, *, write: Callable[[str], None] | None = None) -> None:
        """``stream``: where the lines go (default stdout); ``write``: a function that takes each line instead."""
        self.stream = stream if stream is not None or write is not None else sys.stdout
        self._write_one = write
        self._waiting: collections.deque[Entry] = collections.deque()
        self._dropped = 0
        self._put = 0  # lines queued so far (dropped ones included)
        self._done = 0  # lines written or dropped so far: ``flush`` waits until it reaches ``_put``
        self._queue_lock = threading.Lock()
        self._written = threading.Condition()
        self._wake = threading.Event()
        self._urgent = threading.Event()  # a flush or the close: write now, without letting lines gather
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="gatekit-request-log", daemon=True)
        self._thread.start()

    def put(self, entry: Entry) -> None:
        """Queue a request's line (from the event loop: an uncontended lock, a deque append, never a wait on the
        output)."""
        with self._queue_lock:
            if len(self._waiting) >= self.MAX_WAITING:
                self._waiting.popleft()
                self._dropped += 1
            self._waiting.append(entry)
            self._put += 1
        if not self._wake.is_set():
            self._wake.set()

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait()
            # the lines of the next few ms join these (one wake-up and one write for all), unless a flush or the
            # close asks for them now
            self._urgent.wait(self.GATHER)
            self._urgent.clear()
            self._wake.clear()
            self._drain()

    def _drain(self) -> None:
        while True:
            with self._queue_lock:  # (what waits is taken under the lock; formatting and writing are not)
                entries = [self._waiting.popleft() for _ in range(min(self.BATCH, len(self._waiting)))]
                dropped, self._dropped = self._dropped, 0
            if not entries and not dropped:
                return
            batch = [format_line(entry) for entry in entries]
            if dropped:
                batch.append(f"gatekit simulate: {dropped} request lines dropped (the output did not keep up)")
            self._emit(batch)
            with self._written:
                self._done += len(entries) + dropped
                self._written.notify_all()

    def _emit(self, batch: list[str]) -> None:
        try:
            if self._write_one is not None:
                for text in batch:
                    self._write_one(text)
                return
            assert self.stream is not None
            self.stream.write("\n".join(batch) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken output: the lines have nowhere to go
            pass

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every line queued so far is written (or dropped); False if that took over ``timeout``."""
        target = self._put
        self._urgent.set()
        self._wake.set()
        with self._written:
            return self._written.wait_for(lambda: self._done >= target, timeout)

    def close(self) -> None:
        """Write what waits, then stop the thread."""
        self.flush()
        self._stopping = True
        self._urgent.set()
        self._wake.set()
        self._thread.join(timeout=5)


class RequestLog:
    """ASGI middleware: each request, once answered, leaves its line with ``writer`` (or ``write``: a function
    that takes each formatted line, through a ``LineWriter`` of its own)."""

    def __init__(
        self, app: Callable[..., Any], write: Callable[[str], None] | None = None, *, writer: LineWriter | None = None
    ) -> None:
        self.app = app
        self.writer = writer if writer is not None else LineWriter(write=write) if write is not None else LineWriter()
        # directly around the gateway's front door (``front.Front``, as ``gatekit simulate`` puts it): what
        # it sent is in the scope, and no wrapper around ``send`` is needed to see it
        self._told = bool(getattr(app, "reports_what_it_sent", False))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._told:
            started = time.perf_counter()
            try:
                await self.app(scope, receive, send)
            finally:
                self._leave(scope, scope["path"], scope.get(SENT_SCOPE_KEY, 0), scope.get(ANSWER_KEY), started)
            return
        path = scope.get("path", "")
        started, answer = time.perf_counter(), _Answer(decode=API in path)

        async def sending(message: Message) -> None:
            if answer.decode and ANSWER_KEY in scope:  # the route said what it answered: no body to keep
                answer.decode = False
            answer.see(message)
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self._leave(scope, path, answer.status, _described(scope, answer), started)

    def _leave(self, scope: Scope, path: str, status: int, described: tuple[str, str] | None, started: float) -> None:
        """The request's line, for the writer: ``described`` is the answer's (type, orderid) when it has them."""
        seconds = time.perf_counter() - started
        kind, orderid = described or ("", "")
        self.writer.put((time.time(), scope.get("method", "-"), path, operation(scope), status, kind, orderid, seconds))
