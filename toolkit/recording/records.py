"""What a recording observes: the records the toolkit builds once, masked at birth, and passes along.

- ``toolkit.exchange.Exchange``: a merchant's request to the gateway and its answer (the client's, the proxy's);
- ``toolkit.payer.visits.Visit``: a request of the payer's browser and the page it got, with what the payer did;
- ``toolkit.callbacks.Received``: a callback or a payer redirect as the merchant's back end received it.

The client, the payers and the callback receiver hand each record to their observers; a ``Recorder`` is one of
them.  Serializers (``toolkit.recording.serializers``: HAR 1.2 is one) write records; ``har_read`` reads a HAR
archive back into them, and the sequence diagrams (``toolkit.diagram``) draw them, live or read back.
"""

from __future__ import annotations

from collections.abc import Callable

from toolkit.callbacks.records import Received
from toolkit.exchange import Exchange
from toolkit.payer.visits import Visit

Record = Exchange | Visit | Received
Observer = Callable[[Record], None]

__all__ = ["Exchange", "Observer", "Received", "Record", "Visit"]
