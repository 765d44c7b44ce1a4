"""What the proxy allows its clients and the gateway: one frozen object, read by the listener, the framing and
the exchange.  ``gatekit proxy``'s options set the first four; the sizes are fixed for a gateway's traffic.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Deadlines in seconds, sizes in bytes.

    - ``timeout``: the whole exchange with the gateway, from connecting to the last byte of its answer (not one
      read: a gateway that trickles its answer is cut there too) (``--timeout``);
    - ``request_timeout``: a client's whole request, line, header fields and body, from its first byte (from
      the connection for a new one); and each write of the answer to a client that does not read
      (``--request-timeout``);
    - ``idle_timeout``: a kept-alive connection waiting for its next request (``--idle-timeout``);
    - ``max_connections``: client connections served at once, each by a thread; the next ones get a 503
      (``--max-connections``);
    - ``max_body``: a request body (a gateway request is a few kilobytes); above it a 413 and the connection closed;
    - ``max_head``: a request's line and header fields together;
    - ``kept_body``: of each answer, the bytes the checks read and a recording keeps (the rest is streamed to the
      client and counted, not kept).
    """

    timeout: float = 60.0
    request_timeout: float = 10.0
    idle_timeout: float = 15.0
    max_connections: int = 128
    max_body: int = MIB
    max_head: int = 64 << 10
    kept_body: int = MIB

    def __post_init__(self) -> None:
        for name in ("timeout", "request_timeout", "idle_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: a number of seconds above 0, not {getattr(self, name)!r}")
        if self.max_connections < 1:
            raise ValueError(f"max_connections: at least 1, not {self.max_connections!r}")


__all__ = ["MIB", "Limits"]
