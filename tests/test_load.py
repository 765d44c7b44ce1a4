"""``gatekit load`` (issue 22): the certification flows as Locust users, a distributed run, the reports, the
safety of a target that is not a simulator; the plan and the summary as plain functions.

Locust patches the standard library for gevent when it is imported: every run here is a subprocess, as users
start it; this process never imports ``toolkit.load.users``.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.network import ipv6_loopback
from tests.recording_server import RecordingServer
from tests.simulator.workers import start_workers
from toolkit.load.plan import FLOWS, LoadPlan, PlanError, parse_bind, parse_think, parse_weights
from toolkit.load.receiver import LoadReceiver
from toolkit.load.report import Failure, Results, Row, failure_of, summary_markdown

GATEKIT = [sys.executable, "-m", "toolkit.cli"]


def _env(**extra: str) -> dict[str, str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    return {**clean, **extra}


# --- the plan ------------------------------------------------------------------------------------------


def test_weights_name_the_flows_and_refuse_unknown_ones():
    assert parse_weights("sale=5, threeds=2") == {"sale": 5, "threeds": 2}
    with pytest.raises(PlanError, match="unknown flow 'sael'; flows: sale, threeds"):
        parse_weights("sael=1")
    with pytest.raises(PlanError, match="the weight of sale must be a whole number >= 0, got 'x'"):
        parse_weights("sale=x")
    with pytest.raises(PlanError, match="give at least one flow a weight above 0"):
        parse_weights("sale=0")


@pytest.mark.parametrize(
    ("text", "bound"),
    [("127.0.0.1", ("127.0.0.1", 0)), ("0.0.0.0:9100", ("0.0.0.0", 9100)), ("::1", ("::1", 0)),
     ("[::1]", ("::1", 0)), ("[::1]:9100", ("::1", 9100)), ("[::]:0", ("::", 0))],
)  # fmt: skip
def test_the_callback_bind_takes_ipv4_and_ipv6(text: str, bound: tuple[str, int]):
    assert parse_bind(text) == bound


@pytest.mark.parametrize(
    ("text", "said"),
    [(":9100", "no host"), ("[::1", "in brackets"), ("[::1]9100", "in brackets"), ("host:http", "port must")],
)
def test_a_callback_bind_that_is_no_address_is_refused_naming_the_rule(text: str, said: str):
    with pytest.raises(ValueError, match=said):
        parse_bind(text)


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback (::1) on this machine")
def test_the_receiver_listens_on_ipv6_loopback():
    import requests

    receiver = LoadReceiver("::1", 0).start()
    try:
        assert receiver.callback_url.startswith("http://[::1]:")
        answer = requests.get(receiver.callback_url, params={"orderid": "1", "type": "sale", "status": "approved"},
                              timeout=5)  # fmt: skip
        assert answer.status_code == 200 and receiver.arrivals == 1
    finally:
        receiver.stop()


def test_think_times_and_the_load_table():
    assert parse_think("0.5,2") == (0.5, 2.0) and parse_think("1") == (1.0, 1.0)
    with pytest.raises(PlanError, match="MIN,MAX seconds with 0 <= MIN <= MAX"):
        parse_think("2,1")
    plan = LoadPlan().with_table({"weights": {"payout": 3}, "think": [0, 0.1], "callback_timeout": 3, "max_rps": 9})
    assert (plan.weights, plan.think, plan.callback_timeout, plan.max_rps) == ({"payout": 3}, (0.0, 0.1), 3.0, 9.0)
    assert LoadPlan.from_json(plan.to_json()) == plan
    with pytest.raises(PlanError, match=r"\[load\]: unknown settings users; known: weights"):
        LoadPlan().with_table({"users": 5})


# --- the summary ---------------------------------------------------------------------------------------


def test_failures_are_read_by_kind_as_locust_keeps_them():
    local = failure_of("flow", "sale", "declined: declined: Do not honor", 3)  # (an exception's str, one process)
    remote = failure_of("gateway", "sale", "LoadFailure('server-error: injected fault')", 2)  # (a worker's repr)
    assert (local.kind, local.reason) == ("declined", "declined: Do not honor")
    assert (remote.kind, remote.reason) == ("server-error", "injected fault")
    assert failure_of("flow", "x", "ZeroDivisionError('boom')", 1).kind == "other"


def test_the_summary_says_what_failed_and_the_callbacks():
    rows = (
        Row("flow", "sale", 100, 5, 10.0, 40.0, 90.0, 120.0),
        Row("gateway", "sale", 100, 2, 10.0, 5.0, 9.0, 12.0),
        Row("callback", "received", 98, 0, 9.8, 1.0, 2.0, 3.0),
        Row("callback", "lost", 2, 2, 0.2, 15000.0, 15000.0, 15000.0),
    )
    failures = (Failure("flow", "sale", "declined", "declined: Do not honor", 3),
                Failure("callback", "lost", "callback-lost", "not received within 15 s", 2))  # fmt: skip
    text = summary_markdown(Results("http://sim/paynet", 10, 10.0, rows, failures, workers=2))
    assert text.startswith("# gatekit load: FAILURES\n")
    assert "10 users, 2 Locust workers, 10 s; 100 flows (10.0/s), 5 failed." in text
    assert "Callbacks: 98 received of 100 expected, 2 lost, 0 duplicated." in text
    assert "| sale | 100 | 5 (5.0%) | 10.0 | 40 | 90 | 120 |" in text
    assert "| declined | 3 | flow sale: declined: Do not honor (3) |" in text


# --- runs ----------------------------------------------------------------------------------------------


def test_a_distributed_run_with_a_master_and_two_workers(tmp_path: Path, free_tcp_port: int):
    """Master and two workers, processes on this machine, against the simulator the master starts: every flow
    runs, each expected callback arrives once, and Locust's and gatekit's reports are written."""
    port, reports = free_tcp_port, tmp_path / "reports"
    master = subprocess.Popen(
        [*GATEKIT, "load", "--master", "--expect-workers", "2", "--master-bind-host", "127.0.0.1",
         "--master-bind-port", str(port), "--headless", "-u", "8", "-r", "8", "-t", "4s", "--think", "0,0.1",
         "--reports", str(reports), "--", "--only-summary"],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    workers = [
        subprocess.Popen([*GATEKIT, "load", "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)],
                         cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]  # fmt: skip
    output, _ = master.communicate(timeout=120)
    for worker in workers:
        worker.communicate(timeout=60)
    assert master.returncode == 0, output[-3000:]
    results = json.loads((reports / "results.json").read_text())
    assert results["workers"] == 2 and results["users"] == 8
    flows = {row["name"]: row for row in results["rows"] if row["type"] == "flow"}
    assert set(flows) == set(FLOWS), flows.keys()
    assert all(row["requests"] >= 1 and row["failures"] == 0 for row in flows.values()), flows
    callbacks = results["callbacks"]
    assert callbacks["expected"] >= sum(row["requests"] for row in flows.values())  # one at least per flow
    assert callbacks["received"] == callbacks["expected"] and callbacks["lost"] == callbacks["duplicates"] == 0
    operations = {row["name"]: row["requests"] for row in results["rows"] if row["type"] == "gateway"}
    # (a flow cut by the end of the run sent its requests, but is not counted: at most one per user)
    assert 0 <= operations["upload_cres_result"] - flows["threeds"]["requests"] <= 8
    assert 0 <= operations["capture"] - flows["preauth_capture"]["requests"] <= 8
    for name in ("report.html", "load_stats.csv", "load_failures.csv", "summary.md"):
        assert (reports / name).stat().st_size > 0, name
    assert (reports / "summary.md").read_text().startswith("# gatekit load: PASS")
    # Locust's own figures are HTTP's: flows and callbacks keep their rows, out of the Aggregated row (and so out
    # of its requests per second), also when the master adds up its workers' statistics
    with (reports / "load_stats.csv").open() as stats:
        table = list(csv.DictReader(stats))
    aggregated = next(row for row in table if row["Name"] == "Aggregated")
    http = [row for row in table if row["Type"] in ("gateway", "payer")]
    assert {"flow", "callback", "gateway", "payer"} <= {row["Type"] for row in table}, table
    assert int(aggregated["Request Count"]) == sum(int(row["Request Count"]) for row in http), table
    assert float(aggregated["Requests/s"]) == pytest.approx(sum(float(row["Requests/s"]) for row in http), rel=0.01)


def test_a_gateway_that_is_not_a_simulator_is_refused(tmp_path: Path):
    env = _env(GATEWAY_BASE_URL="https://sandbox.gateway.example/paynet", GATEWAY_LOGIN="acme",
               GATEWAY_CONTROL_KEY="k" * 20, GATEWAY_ENDPOINT_ID="1")  # fmt: skip
    run = subprocess.run([*GATEKIT, "load", "--profile", "sandbox", "--headless", "-t", "1s"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert "is not a gatekit simulator" in run.stderr and "--target-is-not-a-simulator" in run.stderr
    assert not (tmp_path / "reports").exists()


def test_the_rate_cap_holds_against_a_gateway_that_is_not_a_simulator(tmp_path: Path):
    """A simulator seen as a sandbox (the sandbox profile, pointed at it): with --target-is-not-a-simulator the
    whole run sends at most --max-rps requests a second."""
    from toolkit import demo

    simulator = start_workers(1)
    try:
        env = _env(GATEWAY_BASE_URL=simulator.base_url, GATEWAY_LOGIN=demo.LOGIN, GATEWAY_CONTROL_KEY=demo.CONTROL_KEY,
                   GATEWAY_ENDPOINT_ID=demo.ENDPOINT_ID)  # fmt: skip
        run = subprocess.run(
            [*GATEKIT, "load", "--profile", "sandbox", "--target-is-not-a-simulator", "--max-rps", "4",
             "--weights", "sale=1", "--headless", "-u", "20", "-r", "20", "-t", "4s", "--think", "0",
             "--reports", str(tmp_path / "reports"), "--", "--only-summary"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        simulator.stop()
    assert run.returncode in (0, 1), run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "reports" / "results.json").read_text())
    sent = sum(row["requests"] for row in results["rows"] if row["type"] == "gateway")
    assert 2 * 4 <= sent <= 4 * results["seconds"] + 2, (sent, results["seconds"])


def test_every_request_says_it_is_a_load_test(tmp_path: Path):
    """Seen on the socket of a server that is not a simulator: the header, with the run's id."""
    with RecordingServer() as server:
        server.reply({"type": "validation-error", "error-message": "refused by the recording server"}, status=400)
        env = _env(GATEWAY_BASE_URL=server.base_url, GATEWAY_LOGIN="acme", GATEWAY_CONTROL_KEY="k" * 20,
                   GATEWAY_ENDPOINT_ID="1")  # fmt: skip
        run = subprocess.run(
            [*GATEKIT, "load", "--profile", "sandbox", "--target-is-not-a-simulator", "--max-rps", "20",
             "--weights", "sale=1", "--headless", "-u", "2", "-r", "2", "-t", "2s", "--think", "0.2",
             "--reports", str(tmp_path / "reports"), "--", "--only-summary"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        headers = {request.header("X-Load-Test") for request in server.requests}
    assert run.returncode == 1, run.stdout[-2000:]  # every flow refused: Locust's exit status says so
    (header,) = headers
    assert header is not None and header.startswith("gatekit ") and len(header.split()[1]) == 12
    summary = (tmp_path / "reports" / "summary.md").read_text()
    assert "| refused |" in summary and "# gatekit load: FAILURES" in summary


LOCUSTFILE = """
import gevent
from locust import events, task

from toolkit.load import GatewayUser
from toolkit.load.flows import FlowRun, sale


class Checkout(GatewayUser):
    @task
    def checkout_then_status(self):
        def flow(merchant, payer, run: FlowRun) -> None:
            sale(merchant, payer, run)
            merchant.client.status(client_orderid="no-such-order", orderid="1")  # refused: counted, not fatal

        self.run_flow("checkout", flow)


@events.test_start.add_listener
def stop_once_checkout_has_run(environment, **kwargs):
    # (the run ends when a checkout flow has been reported, whatever the machine's speed; -t is the deadline)
    def watch():
        while ("checkout", "flow") not in environment.stats.entries:
            gevent.sleep(0.05)
        environment.runner.quit()

    gevent.spawn(watch)
"""


def test_a_locustfile_of_ones_own_extends_gateway_user(tmp_path: Path):
    """Locust's own command with a merchant's locustfile: its flow is reported beside gatekit's (the team
    simulator, not started by the run, is capped: --gatekit-max-rps lifts the cap)."""
    (tmp_path / "locustfile.py").write_text(LOCUSTFILE)
    simulator = start_workers(1)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "locust", "-f", "locustfile.py", "--headless", "-u", "2", "-r", "2", "-t", "60s",
             "--host", simulator.base_url, "--gatekit-max-rps", "500", "--only-summary", "--stop-timeout", "10"],
            cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        simulator.stop()
    # The summary Locust prints once its users have stopped (its --csv files are rewritten every second by a
    # background writer with no last write at exit: a flow that ends in the last second can be missing from them).
    printed = run.stdout + run.stderr
    assert re.search(r"^\s*flow\s+checkout\s+[1-9]\d*\s+\d+", printed, re.M), printed[-3000:]
    errors = printed.partition("Error report")[2]
    assert re.search(r"flow checkout: LoadFailure\('refused: status: ", errors), printed[-3000:]  # counted, by kind


def test_the_load_table_of_gatekit_toml_then_the_flags(tmp_path: Path, monkeypatch):
    """``gatekit load`` reads ``[load]`` of gatekit.toml, and its flags win; a bad setting is one line naming it."""
    from toolkit.cli import build_parser, parse
    from toolkit.commands.common import UsageError
    from toolkit.commands.load import build_plan, locust_command

    monkeypatch.delenv("GATEKIT_PROFILE", raising=False)
    config = tmp_path / "gatekit.toml"
    config.write_text("[load]\nweights = { sale = 2, payout = 1 }\nthink = [0, 0.5]\ncallback_timeout = 4\n")
    args = parse(build_parser(), ["load", "--think", "1,2", "--headless", "-u", "3", "--", "--web-port", "9"])
    plan = build_plan(args, config)
    assert (plan.weights, plan.think, plan.callback_timeout) == ({"sale": 2, "payout": 1}, (1.0, 2.0), 4.0)
    assert plan.embedded and plan.max_rps is None and len(plan.run_id) == 12
    command = locust_command(args, plan, "http://127.0.0.1:1/paynet")
    assert (
        command[command.index("--users") + 1] == "3" and "--headless" in command and command[-2:] == ["--web-port", "9"]
    )
    assert LoadPlan.from_json(command[command.index("--gatekit-plan") + 1]) == plan
    config.write_text("[load]\nweights = { sael = 1 }\n")
    with pytest.raises(UsageError, match=r"gatekit.toml \[load\] weights: unknown flow 'sael'"):
        build_plan(args, config)


def test_a_lost_and_a_duplicated_callback_fail_their_flows(tmp_path: Path):
    """A team simulator told to fail two callback attempts (retried a second later: past the flows' wait) and to
    send two callbacks twice: the run counts 2 lost and 2 duplicated callbacks, and says so by kind. (Not started
    by the run, the team simulator is capped: --max-rps lifts the cap.)"""
    simulator = start_workers(1)
    try:
        control = simulator.control()
        control.add_fault("callback", "fail", count=2)
        control.add_fault("callback", "duplicate", count=2)
        (tmp_path / "gatekit.toml").write_text(
            f'[profiles.team]\nbase = "simulator"\nbase_url = "{simulator.base_url}"\n'
        )
        run = subprocess.run(
            [*GATEKIT, "load", "--profile", "team", "--max-rps", "500", "--weights", "sale=1", "--callback-timeout",
             "0.5", "--headless", "-u", "2", "-r", "2", "-t", "3s", "--think", "0.05", "--reports", str(tmp_path / "r"),
             "--", "--only-summary"],
            cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        simulator.stop()
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["callbacks"]["lost"] == 2 and results["callbacks"]["duplicates"] == 2, results["callbacks"]
    assert results["failures_by_kind"]["callback-lost"] == 4  # each lost callback fails its flow too
    assert results["failures_by_kind"]["callback-duplicate"] == 2
    summary = (tmp_path / "r" / "summary.md").read_text()
    assert ", 2 lost, 2 duplicated." in summary
