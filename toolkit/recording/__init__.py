"""Recordings of runs as HAR 1.2: what the merchant sent and got, what the payer's browser did, and what the
merchant's back end received (callbacks and redirects), masked like the reports but with the public sandbox
test values that choose an outcome (a CVV2 of the outcome table) kept, and signatures and controls kept.

    recorder = Recorder()                                   # one per scenario (the pytest plugin) or per client
    client = GatewayClient(config, record=recorder)         # or record="run.har": written on close()
    recorder.write("scenario.har", title="A sale")

``gatekit certify --record DIR`` and the plugin's ``--gateway-record DIR`` write one archive per scenario and
``index.json`` (``RecordingRun``); ``gatekit proxy`` records any client's traffic; ``gatekit drift`` compares.
"""

from toolkit.recording.reading import INDEX, RecordingError, read_index
from toolkit.recording.recorder import Recorder
from toolkit.recording.run import RecordingRun, clear

__all__ = ["INDEX", "Recorder", "RecordingError", "RecordingRun", "clear", "read_index"]
