"""What the proxy records of an order: one ``toolkit.exchange.Exchange`` record per exchange, kept by a recorder.

The record is the one the client builds: the request as forwarded (the upstream URL; the headers re-signed when
they had to be; ``signed_with`` when not with the merchant's key; a body that is no form as its text, masked by
value as any text is), the answer with its header fields as they came (a repeated one kept apart: two
``Set-Cookie`` are two) and at most its body's kept part
(``toolkit.proxy.bodies``) within what is left of the order's ``ARCHIVE_BODIES``, its true size and the bytes
left out, and what the proxy found wrong (``findings``).  No part of a recorder is overridden.
"""

from __future__ import annotations

from toolkit.exchange import Answered, Exchange, HeaderFields, HeaderItems, Sent
from toolkit.proxy import bodies
from toolkit.proxy.exchange import Exchange as Proxied
from toolkit.proxy.limits import MIB
from toolkit.recording import Recorder


class OrderRecording:
    """One order's recorder, and the bytes of bodies its recording keeps so far."""

    def __init__(self) -> None:
        self.recorder = Recorder()
        self.kept = 0

    def add(self, exchange: Proxied, url: str, answer_headers: HeaderItems | None) -> Exchange:
        """Record ``exchange`` (forwarded to ``url``; ``answer_headers`` None: no answer came); its record."""
        sent = Sent(exchange.method, url, HeaderFields(exchange.headers), exchange.pairs,
                    signed_with=exchange.signed_with, body=exchange.sent_text)  # fmt: skip
        answered = self.answered(exchange, answer_headers)
        findings = [check.text for check in exchange.checks]
        record = Exchange.capture(exchange.route.operation.name if exchange.route else "", sent, answered,
                                  elapsed=exchange.elapsed, findings=findings)  # fmt: skip
        self.recorder(record)
        return record

    def answered(self, exchange: Proxied, fields: HeaderItems | None) -> Answered:
        """The answer as the recording keeps it: the body's kept part within the order's budget, its true size."""
        error = exchange.error or None
        body = exchange.body if fields is not None else None
        headers = HeaderFields(fields or ())
        if fields is None or body is None:
            return Answered(exchange.status, headers, error=error)
        content_type = next((value for name, value in headers.fields if name.lower() == "content-type"), "")
        text, left_out = body.text(bodies.charset_of(content_type), bodies.ARCHIVE_BODIES - self.kept)
        self.kept += body.size - left_out
        why = (f"gatekit proxy keeps the first {body.limit} bytes of a body, and {bodies.ARCHIVE_BODIES // MIB} MiB "
               "of bodies per order")  # fmt: skip
        return Answered(exchange.status, headers, text, error=error, size=body.size, left_out=left_out, why=why)
