"""``Listener``: the proxy's socket on 127.0.0.1, one thread per client connection, a bounded number of them.

A connection lives as long as its client sends requests in time, and no longer:

- a new connection sends its first whole request (line, header fields, body) within ``request_timeout``; a
  kept-alive one starts its next request within ``idle_timeout`` and sends it within ``request_timeout`` of its
  first byte.  A client too slow gets a 408; a silent one is closed.  A slowloris holds a thread
  ``request_timeout`` at most, and its thread ends with its connection;
- at most ``max_connections`` connections at once: the next ones get a 503 at once, without a thread;
- a request ``framing`` refuses is answered by the service and the connection closed (what the client sent
  after it is read and dropped for a moment, so that the client reads the answer, then never read as a request);
- a client that goes away (a reset, a broken pipe, a close in the middle) ends its connection quietly.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from typing import Protocol

from toolkit.proxy.framing import Head, Incoming, Refusal, body_length, check_head, read_body, read_head
from toolkit.proxy.limits import Limits
from toolkit.proxy.reply import ClientGone, Reply

LINGER = 5.0  # seconds a refused request's remaining bytes are read and dropped, before the connection is closed
LINGER_BYTES = 4 << 20
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
         b"Connection: close\r\nContent-Length: %d\r\n\r\n%b")  # fmt: skip


class Service(Protocol):
    """What a listener serves: the requests it framed, the ones it refused, its own bugs."""

    def serve(self, head: Head, body: bytes, reply: Reply) -> None: ...

    def refuse(self, head: Head | None, refusal: Refusal, reply: Reply) -> None: ...

    def failed(self, error: Exception) -> None: ...


class _Connection:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.busy = False  # between a request's first byte and the end of its answer


class Listener:
    """``Listener(service, limits, port=0).start()``; ``stop()`` closes the socket and every connection."""

    def __init__(self, service: Service, limits: Limits, *, port: int = 0) -> None:
        self.service = service
        self.limits = limits
        self._socket = socket.create_server(("127.0.0.1", port))
        self._socket.setblocking(False)
        self._wake_read, self._wake_write = socket.socketpair()
        self._connections: set[_Connection] = set()
        self._lock = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._accept, name="gatekit-proxy", daemon=True)
        self.turned_away = 0  # connections over ``max_connections``, answered 503
        self.too_slow = 0  # requests not received within ``request_timeout``, answered 408

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._socket.getsockname()[:2]
        return str(host), int(port)

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._connections)

    def start(self) -> Listener:
        self._thread.start()
        return self

    def stop(self, grace: float = 5.0) -> None:
        """Stop accepting; close idle connections now, and busy ones when their answer is written (``grace`` s
        at most)."""
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
            self._shut(busy=False)
        self._wake_write.send(b"!")
        if self._thread.is_alive():
            self._thread.join()
        self._socket.close()
        with self._lock:
            if not self._lock.wait_for(lambda: not self._connections, timeout=grace):
                self._shut(busy=True)
        self._wake_read.close()
        self._wake_write.close()

    def _shut(self, *, busy: bool) -> None:
        for connection in self._connections:
            if busy or not connection.busy:
                with contextlib.suppress(OSError):
                    connection.sock.shutdown(socket.SHUT_RDWR)

    # --- accepting -------------------------------------------------------------------------------------------

    def _accept(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._socket, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            while not self._stopping:
                selector.select()
                try:
                    sock, _ = self._socket.accept()
                except (BlockingIOError, InterruptedError):  # (a wake-up: stopping, or a client gone already)
                    continue
                except OSError:  # (out of file descriptors: a moment for connections to end, not a busy loop)
                    time.sleep(0.05)
                    continue
                connection = _Connection(sock)
                with self._lock:
                    admitted = not self._stopping and len(self._connections) < self.limits.max_connections
                    if admitted:
                        self._connections.add(connection)
                if admitted:
                    threading.Thread(target=self._serve, args=(connection,), name="gatekit-proxy-connection",
                                     daemon=True).start()  # fmt: skip
                else:
                    self._turn_away(sock)

    def _turn_away(self, sock: socket.socket) -> None:
        """503 without a thread: written at once (a few bytes fit in any socket buffer), the connection closed."""
        with self._lock:
            self.turned_away += 1
        text = f"gatekit proxy: {self.limits.max_connections} connections already (--max-connections); try again\n"
        with sock, contextlib.suppress(OSError):
            sock.setblocking(False)
            sock.send(_BUSY % (len(text), text.encode()))
            sock.shutdown(socket.SHUT_WR)
            sock.recv(1 << 16)  # (what already came: closing over unread bytes would reset the connection)

    # --- one connection --------------------------------------------------------------------------------------

    def _serve(self, connection: _Connection) -> None:
        sock = connection.sock
        incoming = Incoming(sock)
        first_deadline = time.monotonic() + self.limits.request_timeout
        try:
            keep = True
            while keep and not self._stopping:
                wait = first_deadline if first_deadline else time.monotonic() + self.limits.idle_timeout
                if not incoming.waiting(wait):
                    return
                deadline = first_deadline or time.monotonic() + self.limits.request_timeout
                keep, first_deadline = self._one(incoming, deadline, connection), 0.0
        except (OSError, EOFError, ClientGone):  # gone, reset, or closed by ``stop``: nothing to say
            pass
        except Exception as error:  # a bug: one masked line from the service, never a traceback
            with contextlib.suppress(Exception):
                self.service.failed(error)
        finally:
            with self._lock:
                self._connections.discard(connection)
                sock.close()
                self._lock.notify_all()

    def _one(self, incoming: Incoming, deadline: float, connection: _Connection) -> bool:
        """Read one request and have it served; whether the connection may serve another."""
        sock = connection.sock
        reply = Reply(sock, write_timeout=self.limits.request_timeout)
        head: Head | None = None
        try:
            head = read_head(incoming, deadline, self.limits)
            reply.for_request(head.method, head.version, keep_alive=False)
            check_head(head)
            length = body_length(head, self.limits)
            if head.get("expect") and head.version == "HTTP/1.1" and not head.expects_continue:  # (1.0: ignored)
                raise Refusal(417, f"Expect: {head.get('expect')[:40]}: the proxy knows 100-continue only")
            if head.expects_continue:
                reply.interim_continue()
            body = read_body(incoming, length, deadline, self.limits)
        except Refusal as refusal:
            self.service.refuse(head or refusal.head, refusal, reply)
            self._linger(sock)
            return False
        except TimeoutError:
            with self._lock:
                self.too_slow += 1
            text = f"gatekit proxy: no whole request within {self.limits.request_timeout:g} s (--request-timeout)\n"
            reply.send(408, [("Content-Type", "text/plain; charset=utf-8")], text.encode())
            return False
        with self._lock:  # (busy: a stop waits for its answer; a stop came first: the request is not served)
            stopping, connection.busy = self._stopping, not self._stopping
        if stopping:
            reply.send(503, [("Content-Type", "text/plain; charset=utf-8")], b"gatekit proxy: stopping\n")
            return False
        reply.for_request(head.method, head.version, keep_alive=head.keep_alive)
        try:
            self.service.serve(head, body, reply)
        finally:
            with self._lock:
                connection.busy = False
        return reply.keep_alive and not self._stopping

    def _linger(self, sock: socket.socket) -> None:
        """After a refusal: no more writing; what the client still sends is dropped (``LINGER`` s at most), so
        that the client, which may be sending a body still, reads the answer rather than a reset."""
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)
            until, dropped = time.monotonic() + LINGER, 0
            while dropped < LINGER_BYTES and (remaining := until - time.monotonic()) > 0:
                sock.settimeout(remaining)
                data = sock.recv(1 << 16)
                if not data:
                    return
                dropped += len(data)


__all__ = ["Listener", "Service"]
