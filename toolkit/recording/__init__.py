"""Recordings of runs: what the merchant sent and got, what the payer's browser did, and what the merchant's back
end received (callbacks and redirects), as records (``Exchange``, ``Visit``, ``Received``: masked at birth)
that a ``Recorder`` observes and a serializer writes: HAR 1.2, masked like the reports but with the public
sandbox test values that choose an outcome (a CVV2 of the outcome table) kept, and signatures and controls kept.

    recorder = Recorder()                                   # one per scenario (the pytest plugin) or per client
    client = GatewayClient(config, observers=[recorder])    # or record="run.har": written on close()
    receiver.observers.append(recorder)                     # callbacks and redirects; Payer(observers=[recorder])
    recorder.write("scenario.har", title="A sale")          # register_serializer("name", ...) for another format

``gatekit certify --record DIR`` and the plugin's ``--gateway-record DIR`` write one archive per scenario and
``index.json`` (``RecordingRun``); ``gatekit proxy`` records any client's traffic; ``gatekit drift`` compares.
``har_read.records(archive)`` reads an archive back into its records (the sequence diagrams draw them).
"""

from toolkit.recording.reading import INDEX, RecordingError, read_index
from toolkit.recording.recorder import Recorder
from toolkit.recording.records import Observer, Record
from toolkit.recording.run import RecordingRun, clear
from toolkit.recording.serializers import register_serializer

__all__ = [
    "INDEX",
    "Observer",
    "Record",
    "Recorder",
    "RecordingError",
    "RecordingRun",
    "clear",
    "read_index",
    "register_serializer",
]
