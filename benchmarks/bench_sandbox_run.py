"""The suite against a sandbox, bounded by its slowest scenario (issue 39): ``gatekit certify --profile standin``.

    .venv/bin/python benchmarks/bench_sandbox_run.py [--repeat 3] [--serial 1] [--callbacks]

The stand-in sandbox is ``gatekit simulate --latency 0.1`` started as the README starts it (it decides 0.1 s after
each request); the profile ``standin`` is a sandbox profile for its demo merchant (the gateway's polling advice,
no control API, no callback URL unless ``--callbacks``: then its receiver is reached through
``GATEKIT_CALLBACK_PORT``).  Each repetition runs ``gatekit certify --profile standin --no-html`` with no other flag
(scenarios side by side, ``in_flight`` at a time) from a fresh folder, and prints its wall time over the longest
test case of its JUnit XML, in the same run.  The first repetition of a folder has no earlier durations (the
first-run order: browsers, then more steps first); the next ones start the longest first.  The serial reference
(``--in-flight 1``) runs ``--serial`` times and its verdicts are compared with every parallel run's.

Goal: wall time at most 4x the slowest scenario's, with the serial run's verdicts.  CPU and load are printed beside
(the machine has 2 cores; Chromium starts for the browser scenarios).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from toolkit import demo  # noqa: E402

GOAL = 4.0


def start_standin(latency: float) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "toolkit.cli", "simulate", "--port", "0", "--latency", str(latency), "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("simulator: "):
            return process, line.split(": ", 1)[1].strip()
    raise SystemExit("gatekit simulate did not start")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def profile(folder: Path, base_url: str, callback_port: int | None) -> None:
    key = folder / "demo-private.pem"
    key.write_bytes(demo.private_key_pem())
    lines = ["[profiles.standin]", 'base = "sandbox"', f'base_url = "{base_url}"',
             f'endpoint_id = "{demo.ENDPOINT_ID}"', f'login = "{demo.LOGIN}"',
             'control_key_env = "STANDIN_CONTROL_KEY"', f'private_key_file = "{key}"']  # fmt: skip
    if callback_port:
        lines.append(f'callback_url = "http://127.0.0.1:{callback_port}"')
    (folder / "gatekit.toml").write_text("\n".join(lines) + "\n")


def certify(folder: Path, callback_port: int | None, *flags: str) -> tuple[float, float, dict[str, str], int]:
    """(wall seconds, CPU seconds of its processes, verdict per scenario, exit status)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "GATEKIT_", "PYTEST_"))}
    env |= {"STANDIN_CONTROL_KEY": demo.CONTROL_KEY}
    if callback_port:
        env["GATEKIT_CALLBACK_PORT"] = str(callback_port)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", "certify", "--profile", "standin", "--no-html", *flags],
                          cwd=folder, env=env, capture_output=True, text=True, check=False)  # fmt: skip
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, verdicts(folder / "reports" / "junit.xml"), done.returncode


def verdicts(junit: Path) -> dict[str, str]:
    said = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        said[case.get("name", "")] = (outcome[0] if outcome else "passed") + f" {float(case.get('time') or 0):.3f}"
    return said


def slowest(said: dict[str, str]) -> tuple[float, str]:
    return max((float(value.split()[1]), name) for name, value in said.items())


def outcomes(said: dict[str, str]) -> dict[str, str]:
    return {name: value.split()[0] for name, value in said.items()}


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="parallel runs (default 3)")
    parser.add_argument("--serial", type=int, default=1, help="serial reference runs (default 1)")
    parser.add_argument("--callbacks", action="store_true", help="the profile has a reachable callback URL")
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    process, base_url = start_standin(args.latency)
    port = free_port() if args.callbacks else None
    print(f"stand-in sandbox: gatekit simulate --latency {args.latency} at {base_url}; "
          f"callbacks: {'through GATEKIT_CALLBACK_PORT ' + str(port) if port else 'none (polls only)'}")  # fmt: skip
    failed = False
    try:
        with tempfile.TemporaryDirectory() as serial_folder, tempfile.TemporaryDirectory() as parallel_folder:
            profile(Path(serial_folder), base_url, port)
            profile(Path(parallel_folder), base_url, port)
            reference: dict[str, str] = {}
            for number in range(1, args.serial + 1):
                wall, cpu, said, code = certify(Path(serial_folder), port, "--in-flight", "1")
                took, name = slowest(said)
                reference = reference or outcomes(said)
                print(f"serial   {number}: {wall:6.1f} s wall, {cpu:5.1f} s CPU, slowest {took:5.2f} s ({name[:50]}): "
                      f"{wall / took:5.1f}x; exit {code}; {load()}")  # fmt: skip
            ratios = []
            for number in range(1, args.repeat + 1):
                wall, cpu, said, code = certify(Path(parallel_folder), port)
                took, name = slowest(said)
                same = outcomes(said) == reference if reference else None
                ratios.append(wall / took)
                differ = sorted(n for n, o in outcomes(said).items() if reference.get(n) != o)
                order = "first-run order" if number == 1 else "longest first (earlier durations)"
                print(f"parallel {number}: {wall:6.1f} s wall, {cpu:5.1f} s CPU, slowest {took:5.2f} s ({name[:50]}): "
                      f"{wall / took:5.2f}x (goal <= {GOAL:g}x); {order}; verdicts "
                      f"{'same as serial' if same else 'DIFFER: ' + '; '.join(differ)}; exit {code}; "
                      f"{load()}")  # fmt: skip
                failed |= wall / took > GOAL or same is False or code != 0
            print(f"parallel / slowest: {', '.join(f'{r:.2f}x' for r in ratios)}; goal <= {GOAL:g}x: "
                  f"{'met in every run' if all(r <= GOAL for r in ratios) else 'NOT met in every run'}")  # fmt: skip
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
