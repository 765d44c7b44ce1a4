"""A client's request as RFC 9112 frames it: the request line, the header fields, the body's length, the body.

The proxy reads its clients' requests itself (not with ``http.server``), strictly: a server that frames a message
otherwise than the client meant (``Content-Length: +5`` read as no body, the rest of an over-long body read as
the next request) lets one request carry another.  Whatever this module refuses is a ``Refusal`` with its
status; the connection is then closed, so nothing after it is ever read as a request.  The request target must
be a path (origin-form): the proxy forwards to its ``--to`` and nowhere else.
"""

from __future__ import annotations

import re
import socket
import time
from dataclasses import dataclass

from toolkit.masking import mask_text
from toolkit.proxy.limits import Limits
from toolkit.terminal import printable

CHUNKED = -1  # ``body_length``: the body comes in chunks (RFC 9112 7.1)
MAX_REQUEST_LINE = 8 << 10
MAX_FIELDS = 100
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 5.6.2
_VERSION = re.compile(rb"HTTP/([0-9])\.([0-9])")
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")  # in a field value: CTLs but HTAB (obs-text is allowed)
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
# origin-form (RFC 9112 3.2.1): an absolute path of RFC 3986 pchars, and a query of visible characters but ``#``
_PATH = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*")
_QUERY = re.compile(r"[\x21-\x22\x24-\x7e]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_SEPARATOR_ESCAPE = re.compile(r"(?i)%(2f|5c)")  # an escaped / or \ in the path: read as a separator by some
_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(:[0-9]*)?")  # RFC 9110 7.2


class Refusal(Exception):
    """A request the proxy answers itself with ``status`` (and then closes the connection)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.head: Head | None = None  # what was read of the request before it was refused, if its line was


class Incoming:
    """A client's socket read through a buffer; every read ends by a deadline (a ``time.monotonic()`` time).

    ``TimeoutError`` when the deadline passes, ``EOFError`` when the client closes; a reset is an ``OSError``."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = bytearray()

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        self.sock.settimeout(remaining)
        data = self.sock.recv(1 << 16)
        if not data:
            raise EOFError
        self._buffer += data

    def waiting(self, deadline: float) -> bool:
        """Whether a byte arrives by ``deadline``: False when the client closes or stays silent until then."""
        if not self._buffer:
            try:
                self._fill(deadline)
            except (TimeoutError, EOFError):
                return False
        return True

    def line(self, limit: int, deadline: float, too_long: Refusal) -> bytes:
        """The next line, without its LF and a CR before it (RFC 9112 2.2); ``too_long`` above ``limit`` bytes."""
        searched = 0
        while (end := self._buffer.find(b"\n", searched)) < 0:
            searched = len(self._buffer)
            if searched > limit:
                raise too_long
            self._fill(deadline)
        if end > limit:
            raise too_long
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line.removesuffix(b"\r")

    def exact(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            self._fill(deadline)
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data


@dataclass(frozen=True)
class Head:
    """A request's line and header fields (names as sent, values without the whitespace around them)."""

    method: str
    target: str
    version: str
    fields: tuple[tuple[str, str], ...]

    def values(self, name: str) -> list[str]:
        return [value for field, value in self.fields if field.lower() == name]

    def get(self, name: str) -> str:
        return next(iter(self.values(name)), "")

    @property
    def keep_alive(self) -> bool:
        """HTTP/1.1 keeps the connection unless the client says ``close``; HTTP/1.0 is served once."""
        tokens = {token.strip().lower() for value in self.values("connection") for token in value.split(",")}
        return self.version == "HTTP/1.1" and "close" not in tokens

    @property
    def expects_continue(self) -> bool:
        return self.version == "HTTP/1.1" and self.get("expect").lower() == "100-continue"


def shown(text: str, limit: int = 120) -> str:
    """A client's text in a message: masked, printable, cut."""
    text = printable(mask_text(text))
    return text if len(text) <= limit else text[:limit] + "..."


def read_head(incoming: Incoming, deadline: float, limits: Limits) -> Head:
    """The request line and the header fields, as RFC 9112 (2-5) writes them (their meaning: ``check_head``)."""
    for _ in range(4):  # (RFC 9112 2.2: empty lines before a request line are ignored)
        line = incoming.line(MAX_REQUEST_LINE, deadline, Refusal(414, "a request line above 8 KiB"))
        if line:
            break
    else:
        raise Refusal(400, "empty lines where a request line belongs")
    method, target, version = _request_line(line)
    fields: list[tuple[str, str]] = []
    budget = limits.max_head - len(line)
    too_large = Refusal(431, f"request header fields above {limits.max_head} bytes, or above {MAX_FIELDS} fields")
    try:
        while line := incoming.line(max(budget, 1), deadline, too_large):
            budget -= len(line) + 2
            if len(fields) == MAX_FIELDS:
                raise too_large
            fields.append(_field(line))
    except Refusal as refusal:
        refusal.head = Head(method, target, version, tuple(fields))
        raise
    return Head(method, target, version, tuple(fields))


def check_head(head: Head) -> None:
    """What a well-formed head must still be: a path for its target (``origin_form``), one valid ``Host``."""
    origin_form(head.target)
    _check_host(head)


def _request_line(line: bytes) -> tuple[str, str, str]:
    parts = line.split(b" ")
    if len(parts) != 3 or b"\r" in line:
        raise Refusal(400, f"request line {shown(line.decode('latin-1'))!r}: not METHOD SP TARGET SP HTTP/1.1")
    method, target, version = parts
    if not _TOKEN.fullmatch(method):
        raise Refusal(400, f"method {shown(method.decode('latin-1'))!r}: not a token")
    found = _VERSION.fullmatch(version)
    if found is None:
        raise Refusal(400, f"version {shown(version.decode('latin-1'))!r}: not HTTP/1.1")
    if found.group(1) != b"1":
        raise Refusal(505, f"{version.decode()}: the proxy speaks HTTP/1.1 and HTTP/1.0")
    return method.decode("ascii"), target.decode("latin-1"), version.decode("ascii")


def _field(line: bytes) -> tuple[str, str]:
    """``name: value`` (RFC 9112 5): no whitespace before the colon, no folded lines, no control characters."""
    if line[:1] in (b" ", b"\t"):
        raise Refusal(400, "a header field folded over lines (obs-fold, RFC 9112 5.2)")
    name, colon, value = line.partition(b":")
    if not colon or not _TOKEN.fullmatch(name):
        raise Refusal(400, f"header field {shown(line.decode('latin-1'), 60)!r}: not NAME: VALUE (RFC 9112 5.1)")
    value = value.strip(b" \t")
    if _CONTROL.search(value):
        raise Refusal(400, f"header field {name.decode()}: a control character in its value")
    return name.decode("ascii"), value.decode("latin-1")


def origin_form(target: str) -> str:
    """``target`` when it is a path and a query (RFC 9112 3.2.1), which the proxy appends to its ``--to``.

    An absolute URL, ``//host``, ``@host``, ``.host``, ``*``, dot segments and escaped separators could take
    the request to another host or out of ``--to``'s path: refused."""
    path, _, query = target.partition("?")
    if not path.startswith("/") or path.startswith("//"):
        why = "an absolute URL or another host" if "//" in target or "@" in target else "not a path"
        raise Refusal(400, f"request target {shown(target)!r}: {why}; the proxy forwards paths starting with / to "
                           "its --to only (it is no open proxy)")  # fmt: skip
    if not _PATH.fullmatch(path) or not _QUERY.fullmatch(query) or _BAD_ESCAPE.search(target):
        raise Refusal(400, f"request target {shown(target)!r}: characters a URL does not carry unescaped")
    dot = any(segment.lower().replace("%2e", ".") in (".", "..") for segment in path.split("/"))
    if dot or _SEPARATOR_ESCAPE.search(path):
        raise Refusal(400, f"request target {shown(target)!r}: dot segments or escaped slashes could leave the "
                           "path of --to")  # fmt: skip
    return target


def _check_host(head: Head) -> None:
    """RFC 9112 3.2: one ``Host`` in an HTTP/1.1 request, a valid one."""
    hosts = head.values("host")
    if len(hosts) > 1 or (not hosts and head.version == "HTTP/1.1"):
        raise Refusal(400, f"{len(hosts)} Host header fields: an HTTP/1.1 request has one (RFC 9112 3.2)")
    if hosts and not _HOST.fullmatch(hosts[0]):
        raise Refusal(400, f"Host {shown(hosts[0], 60)!r}: not a host and a port")


def body_length(head: Head, limits: Limits) -> int:
    """The body's length in bytes, or ``CHUNKED`` (RFC 9112 6.1-6.3); a 413 above ``limits.max_body``."""
    if head.values("transfer-encoding"):
        codings = [c.strip().lower() for value in head.values("transfer-encoding") for c in value.split(",")]
        if head.values("content-length"):
            raise Refusal(400, "Content-Length and Transfer-Encoding together: which one frames the body? "
                               "(RFC 9112 6.3)")  # fmt: skip
        if head.version != "HTTP/1.1" or codings[-1] != "chunked":
            raise Refusal(400, f"Transfer-Encoding {shown(', '.join(codings), 60)}: an HTTP/1.1 request's last "
                               "coding is chunked (RFC 9112 6.3)")  # fmt: skip
        if codings != ["chunked"]:
            raise Refusal(501, f"Transfer-Encoding {shown(', '.join(codings), 60)}: the proxy decodes chunked only")
        return CHUNKED
    values = {item.strip(" \t") for value in head.values("content-length") for item in value.split(",")}
    for value in sorted(values):
        if not _DIGITS.fullmatch(value):
            raise Refusal(400, f"Content-Length {shown(value, 40)!r}: not a number of bytes (1*DIGIT, RFC 9112 6.3)")
    if len(values) > 1:
        raise Refusal(400, f"Content-Length {shown(', '.join(sorted(values)), 60)}: several lengths (RFC 9112 6.3)")
    return _length(values, limits)


def _length(values: set[str], limits: Limits) -> int:
    if not values:
        return 0
    value = next(iter(values)).lstrip("0") or "0"
    if len(value) > 15 or int(value) > limits.max_body:
        raise Refusal(413, f"a request body of {value if len(value) <= 15 else 'above 10^15'} bytes: the proxy takes "
                           f"at most {limits.max_body} (a gateway request is a few kilobytes)")  # fmt: skip
    return int(value)


def read_body(incoming: Incoming, length: int, deadline: float, limits: Limits) -> bytes:
    """The body ``body_length`` announced: ``length`` bytes, or chunks (their trailer fields are dropped)."""
    if length != CHUNKED:
        return incoming.exact(length, deadline) if length else b""
    body = bytearray()
    while True:
        line = incoming.line(1024, deadline, Refusal(400, "a chunk-size line above 1 KiB"))
        size = line.partition(b";")[0].rstrip(b" \t")  # (a chunk extension after ";" is ignored, RFC 9112 7.1.1)
        if not _HEX.fullmatch(size):
            raise Refusal(400, f"chunk size {shown(size.decode('latin-1'), 40)!r}: not a hexadecimal number")
        if len(body) + int(size, 16) > limits.max_body:
            raise Refusal(413, f"a chunked request body above {limits.max_body} bytes (a gateway request is a few "
                               "kilobytes)")  # fmt: skip
        if not int(size, 16):
            break
        body += incoming.exact(int(size, 16), deadline)
        if incoming.exact(2, deadline) != b"\r\n":
            raise Refusal(400, "chunk data not followed by CRLF (RFC 9112 7.1)")
    too_large = Refusal(431, f"trailer fields above 8 KiB, or above {MAX_FIELDS} fields")
    for _ in range(MAX_FIELDS + 1):  # the trailer section, up to its empty line
        if not incoming.line(8 << 10, deadline, too_large):
            return bytes(body)
    raise too_large


__all__ = [
    "CHUNKED",
    "Head",
    "Incoming",
    "Refusal",
    "body_length",
    "check_head",
    "origin_form",
    "read_body",
    "read_head",
]
