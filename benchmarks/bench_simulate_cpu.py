"""Server CPU of ``gatekit simulate`` as the README starts it, against a bare uvicorn app (issue 23).

    .venv/bin/python benchmarks/bench_simulate_cpu.py [--pairs 1500] [--repeat 5]

Four servers, each pinned to one core, the client (one keep-alive connection, one request at a time, bodies
signed beforehand) to the other, as ``bench_server_cpu.py`` does: the bare app, ``gatekit simulate`` with its
line per request (stdout to a file: not a terminal, so its lines are written in batches), ``gatekit simulate
--quiet``, and the in-process ``SimulatorServer`` (``bench_server_cpu.py``'s figure).  Each repetition sends
every server sale + status pairs, then sales alone and statuses alone; the servers take turns (interleaved),
``--repeat`` times.  The judged figure is server CPU time per request (utime + stime of all the server's
threads, from ``/proc``), as a ratio to the bare app's; every repetition is printed with the median.

Goals: log on <= 2.0x and --quiet <= 1.7x bare uvicorn per sale + status pair; sale alone <= 2.5x, status alone
<= 1.8x (for gatekit simulate with its log on).
"""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import statistics
import subprocess
import tempfile
import threading
from pathlib import Path

from benchservers import API, HEADERS, Server, cores, presigned, start

ROOT = Path(__file__).resolve().parents[1]
WARM_UP = 100
GOALS = {"pair, log on": 2.0, "pair, --quiet": 1.7, "sale alone": 2.5, "status alone": 1.8}


class Simulate:
    """``gatekit simulate`` started as the README starts it (plus ``--port 0``), pinned with ``taskset``."""

    def __init__(self, core: int | None, *flags: str) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix="gatekit-simulate-", suffix=".log", delete=False)  # noqa: SIM115
        command = [str(ROOT / ".venv" / "bin" / "gatekit"), "simulate", "--port", "0", *flags]
        if core is not None:
            command = ["taskset", "-c", str(core), *command]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._copy, args=(lines,), daemon=True).start()
        first = lines.get(timeout=60)
        self.port = int(first.rsplit(":", 1)[1].split("/", 1)[0])

    def _copy(self, lines: queue.Queue[str]) -> None:
        """The header to the benchmark, every request line to a file (what a redirected stdout costs)."""
        assert self.process.stdout is not None
        for index, line in enumerate(self.process.stdout):
            if index == 0:
                lines.put(line)
            self.log.write(line.encode())

    @property
    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()
        os.unlink(self.log.name)


def drive(server: Server | Simulate, bodies: list[tuple[str, bytes]]) -> float:
    """Send ``bodies`` ((operation, body) in turn) on one keep-alive connection; server CPU ms per request."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    before = server.cpu_seconds
    for index, (operation, body) in enumerate(bodies):
        if index == WARM_UP:
            before = server.cpu_seconds
        connection.request("POST", f"{API}/{operation}/1001", body=body, headers=HEADERS)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
    spent = server.cpu_seconds - before
    connection.close()
    return spent * 1000 / (len(bodies) - WARM_UP)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=1500, help="sale + status pairs per server, per repetition")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved repetitions (the median is the figure)")
    args = parser.parse_args()
    server_core, client_core = cores()
    if client_core is not None:
        os.sched_setaffinity(0, {client_core})
    print(f"server core {server_core}, client core {client_core}, {args.pairs} pairs x {args.repeat}, interleaved")
    servers: dict[str, Server | Simulate] = {
        "bare uvicorn": start("bare", server_core),
        "gatekit simulate": Simulate(server_core),
        "gatekit simulate --quiet": Simulate(server_core, "--quiet"),
        "in-process SimulatorServer": start("simulator", server_core),
    }
    rows: dict[str, dict[str, list[float]]] = {name: {"pair": [], "sale": [], "status": []} for name in servers}
    try:
        for repetition in range(args.repeat):
            for name, server in servers.items():
                sales, statuses = presigned(f"sim-{os.getpid()}-{repetition}-{len(name)}", WARM_UP + args.pairs)
                pairs = [item for pair in zip(sales, statuses, strict=True) for item in
                         (("sale", pair[0]), ("status", pair[1]))]  # fmt: skip
                rows[name]["pair"].append(drive(server, pairs))
                more_sales, more_statuses = presigned(f"alone-{os.getpid()}-{repetition}-{len(name)}",
                                                      WARM_UP + args.pairs)  # fmt: skip
                rows[name]["sale"].append(drive(server, [("sale", body) for body in more_sales]))
                rows[name]["status"].append(drive(server, [("status", body) for body in more_statuses]))
    finally:
        for server in servers.values():
            server.stop()
    floor = rows["bare uvicorn"]
    print(f"\n{'server':30}{'kind':>8}  ms/request per repetition (ratio to bare)                      median")
    for name, kinds in rows.items():
        for kind, values in kinds.items():
            ratios = [value / base for value, base in zip(values, floor[kind], strict=True)]
            each = ", ".join(f"{value:.3f} ({ratio:.2f}x)" for value, ratio in zip(values, ratios, strict=True))
            print(f"{name:30}{kind:>8}  {each}   {statistics.median(ratios):.2f}x")
    judged = {
        "pair, log on": rows["gatekit simulate"]["pair"],
        "pair, --quiet": rows["gatekit simulate --quiet"]["pair"],
        "sale alone": rows["gatekit simulate"]["sale"],
        "status alone": rows["gatekit simulate"]["status"],
    }
    kinds = {"pair, log on": "pair", "pair, --quiet": "pair", "sale alone": "sale", "status alone": "status"}
    print()
    for goal, values in judged.items():
        ratio = statistics.median(v / b for v, b in zip(values, floor[kinds[goal]], strict=True))
        verdict = "met" if ratio <= GOALS[goal] else "NOT met"
        print(f"goal {goal}: <= {GOALS[goal]}x bare: {ratio:.2f}x, {verdict}")


if __name__ == "__main__":
    main()
