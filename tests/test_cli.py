"""The gatekit command line, in-process against the recording server, and once as the installed script."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from cryptography.hazmat.primitives import serialization

from tests.independent import base_string, hmac_sha1, rsa_sha256_valid, sha1_hex
from tests.recording_server import RecordingServer, Reply
from tests.sample_requests import CVV, PAN, SALE
from tests.vector_files import VECTORS, load_vectors
from toolkit import cli, demo
from toolkit.client import GatewayClient
from toolkit.commands import call as call_command
from toolkit.commands.request_log import LineWriter, RequestLog
from toolkit.commands.stopping import Stop, stop_on_signals
from toolkit.config import simulator_config
from toolkit.keys import load_public_key
from toolkit.masking import mask_base_string
from toolkit.operations import OPERATIONS
from toolkit.simulator.server import SimulatorServer

pytestmark = pytest.mark.usefixtures("clean_env")

SALE_ARGS = [f"{name}={value}" for name, value in SALE.items()]
ACK = {"type": "async-response", "serial-number": "s-1", "paynet-order-id": 8056020, "merchant-order-id": "inv-1"}
VECTOR_MERCHANT = [
    "--base-url",
    "https://sandbox.gateway.example/paynet",
    "--endpoint-id",
    "51494",
    "--login",
    "merchant-login",
    "--control-key",
    "B17F59B4-A7DC-41B4-8FF9-37D986B43D20",
]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- gatekit operations --------------------------------------------------------------------------


def test_operations_json_is_the_catalogue(capsys):
    code, out, _ = run(capsys, "operations", "--json")
    listed = json.loads(out)
    assert code == 0
    assert [op["name"] for op in listed] == list(OPERATIONS)
    sale = listed[0]
    assert (sale["path"], sale["code"], sale["auth"], sale["group_path"]) == (
        "/api/v2/sale/{endpointId}",
        "SALE",
        "control",
        "/api/v2/sale/group/{endpointGroupId}",
    )
    assert (
        sale["control"] == "SHA-1(endpointId + client_orderid + amount_in_minor_units + email + merchant_control_key)"
    )
    assert sale["required"] == list(OPERATIONS["sale"].required)
    payout_pay = next(op for op in listed if op["name"] == "payout_pay")
    assert payout_pay["control"] is None and any("assumed" in note for note in payout_pay["assumed"])


def test_operations_text_names_every_path_and_assumption(capsys):
    code, out, _ = run(capsys, "operations")
    assert code == 0
    for op in OPERATIONS.values():
        assert f"{op.name}  POST {op.path}" in out
        assert all(note in out for note in op.assumed)


# --- gatekit call --------------------------------------------------------------------------------


def test_call_prints_the_decoded_response_and_signs_with_the_flags(capsys, server):
    server.reply(ACK)
    code, out, err = run(
        capsys,
        "call",
        "status",
        "client_orderid=inv-1",
        "orderid=8056020",
        "--base-url",
        server.base_url,
        "--endpoint-id",
        "7",
        "--login",
        "cli-login",
        "--control-key",
        "cli-key",
    )
    assert (code, err) == (0, "")
    assert json.loads(out) == {**ACK, "paynet-order-id": "8056020"}
    assert server.last.path == "/paynet/api/v2/status/7"
    assert server.last.fields["control"] == sha1_hex("cli-logininv-18056020cli-key")


def test_call_reads_the_environment_and_the_flags_win(capsys, server, monkeypatch):
    server.reply(ACK)
    monkeypatch.setenv("GATEWAY_BASE_URL", server.base_url)
    monkeypatch.setenv("GATEWAY_ENDPOINT_ID", "51494")
    monkeypatch.setenv("GATEWAY_CONTROL_KEY", "env-key")
    assert run(capsys, "call", "status", "client_orderid=inv-1")[0] == 0
    assert server.last.path == "/paynet/api/v2/status/51494"
    assert server.last.fields["control"] == sha1_hex(f"{demo.LOGIN}inv-1env-key")
    assert run(capsys, "call", "status", "client_orderid=inv-1", "--endpoint-id", "8")[0] == 0
    assert server.last.path == "/paynet/api/v2/status/8"


def test_call_by_code_or_path_segment_and_by_group(capsys, server):
    server.reply(ACK)
    code, _, _ = run(capsys, "call", "SALE", *SALE_ARGS, "--base-url", server.base_url, "--use-group")
    assert code == 0
    assert server.last.path == f"/paynet/api/v2/sale/group/{demo.ENDPOINT_GROUP_ID}"
    assert server.last.fields["control"] == sha1_hex(
        f"{demo.ENDPOINT_GROUP_ID}inv-11042john.smith@example.com{demo.CONTROL_KEY}"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["call", "sale", "client_orderid=inv-1"], "sale: request refused before sending: order_desc: is required"),
        (["call", "sale", *SALE_ARGS[:-1], "cvv2=12"], "cvv2: must be 3 or 4 digits"),
        (["call", "sale", *SALE_ARGS[:2], "amount=10.005", *SALE_ARGS[3:]], "amount 10.005 has more decimals than EUR"),
        (["call", "refund", "a=1"], "unknown operation 'refund'; known operations: sale"),
        (["call", "status", "client_orderid"], "'client_orderid': request fields are written name=value"),
        (["call", "status", "client_orderid=a", "client_orderid=b"], "field client_orderid is given twice"),
        (["call", "status", "client_orderid=a", "--profile", "prod"], "unknown profile 'prod'"),
        (
            ["call", "payout_pay", "client_orderid=a", "orderid=1", "--use-group"],
            "payout_pay has no group address",
        ),
        (
            [
                "call",
                "payout_check",
                "client_orderid=a",
                "amount=1",
                "currency=EUR",
                "ewallet_id=w",
                "--private-key-file",
                "/nonexistent.pem",
            ],
            "cannot read key file /nonexistent.pem",
        ),
    ],
    ids=[
        "missing field",
        "bad cvv",
        "EUR 10.005",
        "unknown operation",
        "not name=value",
        "twice",
        "unknown profile",
        "group not possible",
        "missing key file",
    ],
)
def test_refused_before_sending_exits_2(capsys, server, argv, message):
    code, out, err = run(capsys, *argv, "--base-url", server.base_url)
    assert (code, out) == (2, "")
    assert message in err and err.startswith("gatekit call: ")
    assert server.requests == []


def test_usage_errors_from_argparse_exit_2(capsys):
    assert run(capsys, "call")[0] == 2
    assert run(capsys, "nonsense")[0] == 2
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "call" in out and "operations" in out


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            Reply({"type": "validation-error", "serial-number": "s-9", "error-message": "Invalid control"}, 400),
            "sale: Invalid control [serial-number s-9]",
        ),
        (
            Reply({"type": "validation-error", "error-message": "oauth_signature invalid"}, 401),
            "oauth_signature invalid",
        ),
        (Reply({"type": "error", "error-message": "Internal error"}, 500), "sale: Internal error"),
        (Reply("type=validation-error\n&serial-number=s-8\n&error-message=amount+too+large\n"), "amount too large"),
    ],
    ids=["400", "401", "500", "legacy validation error"],
)
def test_gateway_refusal_exits_3_with_the_body_on_stdout(capsys, server, reply, message):
    server.reply(reply)
    code, out, err = run(capsys, "call", "sale", *SALE_ARGS, "--base-url", server.base_url)
    assert code == 3
    assert message in err
    assert json.loads(out)["type"] in ("validation-error", "error")


def test_a_misspelled_field_is_refused_naming_the_field_it_meant(capsys, server):
    """As the proxy says it (``toolkit.validation.meant_field``), with what else the request lacks, in one answer."""
    args = [arg.replace("amount=", "ammount=") for arg in SALE_ARGS]
    code, out, err = run(capsys, "call", "sale", *args, "colour=red", "--base-url", server.base_url)
    assert (code, out, server.requests) == (2, "", [])
    note, refusal = err.splitlines()
    assert note == "note: fields sale does not know (the gateway ignores them): colour"
    assert refusal == ("gatekit call: sale: request refused before sending: ammount: not a field of sale, did you mean "
                       "amount? (the gateway ignores ammount); amount: is required by sale"), err  # fmt: skip


def test_no_validate_sends_a_misspelled_field_saying_what_it_meant(capsys, server):
    server.reply(ACK)
    args = [arg.replace("amount=", "ammount=") for arg in SALE_ARGS]
    code, _, err = run(capsys, "call", "sale", *args, "--no-validate", "--base-url", server.base_url)
    assert code == 0 and server.last.fields["ammount"] == "10.42"
    assert "note: ammount: not a field of sale, did you mean amount? (the gateway ignores ammount)" in err, err


def test_no_validate_sends_what_the_client_would_refuse(capsys, server):
    server.reply(Reply({"type": "validation-error", "error-message": "email is required"}, 400))
    args = [arg for arg in SALE_ARGS if not arg.startswith("email=")]
    code, _, err = run(capsys, "call", "sale", *args, "--no-validate", "--base-url", server.base_url)
    assert code == 3 and "email is required" in err
    assert "email" not in server.last.fields
    assert server.last.fields["control"] == sha1_hex(f"1001inv-11042{demo.CONTROL_KEY}")


def test_transport_and_protocol_failures_exit_4(capsys, server):
    with RecordingServer() as gone:
        closed = gone.base_url
    code, _, err = run(capsys, "call", "status", "client_orderid=inv-1", "--base-url", closed)
    assert code == 4 and "no answer from" in err
    server.reply(Reply("<html>502 Bad Gateway</html>", 502, "text/html"))
    code, _, err = run(capsys, "call", "status", "client_orderid=inv-1", "--base-url", server.base_url)
    assert code == 4 and "HTTP 502 text/html: not JSON" in err


def test_call_output_never_shows_secrets_or_card_data(capsys, server):
    echo = {
        "type": "validation-error",
        "error-message": f"card {PAN} with cvv2={CVV} refused",
        "cvv2": CVV,
        "card-number": PAN,
    }
    server.reply(Reply(echo, 400))
    code, out, err = run(
        capsys,
        "call",
        "sale",
        *SALE_ARGS,
        "--base-url",
        server.base_url,
        "--control-key",
        "S3CR3T-CONTROL-KEY",
        "--private-key-passphrase",
        "my pass phrase",
    )
    assert code == 3
    for secret in (PAN, f"cvv2={CVV}", f'"cvv2": "{CVV}"', "S3CR3T-CONTROL-KEY", "my pass phrase"):
        assert secret not in out + err, secret
    assert "444455******1111" in out


# --- gatekit sign ----------------------------------------------------------------------------------


def test_sign_control_shows_formula_parts_and_control_of_the_doc_example(capsys):
    vector = load_vectors("control.json")["vectors"][0]  # the public documentation's worked sale example
    fields = [
        "client_orderid=902B4FF5",
        "amount=10.42",
        "currency=EUR",
        "email=john.smith@gmail.com",
        *(arg for arg in SALE_ARGS if arg.split("=")[0] not in ("client_orderid", "amount", "currency", "email")),
    ]
    code, out, _ = run(capsys, "sign", "sale", *fields, *VECTOR_MERCHANT, "--endpoint-id", "1111")
    assert code == 0
    assert "SHA-1(endpointId + client_orderid + amount_in_minor_units + email + merchant_control_key)" in out
    for name, value in [
        ("endpointId", "1111"),
        ("client_orderid", "902B4FF5"),
        ("amount", "1042"),
        ("email", "john.smith@gmail.com"),
        ("merchant_control_key", "<merchant_control_key>"),
    ]:
        assert any(line.split() == [name, value] for line in out.splitlines()), name
    assert f"control        {vector['sha1_hex']}" in out
    assert "1111902B4FF51042john.smith@gmail.com<merchant_control_key>" in out
    assert "B17F59B4" not in out and PAN not in out and f"cvv2={CVV}" not in out


def test_sign_json_for_a_control_operation(capsys):
    code, out, _ = run(capsys, "sign", "status", "client_orderid=inv-794772", *VECTOR_MERCHANT, "--json")
    report = json.loads(out)
    assert code == 0
    assert report["control"] == "a1a96bcf1225a1e0aa456339bd6ba50b3163f9d8"  # vector: status by client_orderid only
    assert [part["name"] for part in report["parts"]] == ["login", "client_orderid", "orderid", "merchant_control_key"]
    assert report["request"] == "POST https://sandbox.gateway.example/paynet/api/v2/status/51494"


@pytest.mark.parametrize(
    "vector", load_vectors("oauth.json")["vectors"], ids=[v["case"] for v in load_vectors("oauth.json")["vectors"]]
)
def test_sign_reproduces_every_oauth_vector(capsys, vector):
    oauth = vector["oauth"]
    op = next(o.name for o in OPERATIONS.values() if vector["url"].endswith(o.path.format(endpointId="51494")))
    key = ["--private-key-file", str(VECTORS / vector["private_key_file"])] if "private_key_file" in vector else []
    fields = [f"{name}={value}" for name, value in vector["body"].items()]
    code, out, _ = run(
        capsys,
        "sign",
        op,
        *fields,
        *VECTOR_MERCHANT,
        *key,
        "--no-validate",
        "--timestamp",
        oauth["oauth_timestamp"],
        "--nonce",
        oauth["oauth_nonce"],
        "--json",
    )
    report = json.loads(out)
    assert code == 0
    assert report["signature"] == vector["signature"]
    assert report["base_string"] == mask_base_string(vector["base_string"])
    assert report["oauth"] == {name: oauth[name] for name in sorted(oauth)}
    assert PAN not in out and "B17F59B4" not in out


def test_sign_text_for_hmac_matches_an_independent_computation(capsys, server):
    fields = ["client_orderid=p-1", "amount=10.42", "currency=EUR", "account_number=DE89370400440532013000"]
    argv = ["sign", "payout", *fields, "--base-url", server.base_url, "--timestamp", "1700000000", "--nonce", "n-1"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and run(capsys, *argv)[1] == out  # reproducible
    oauth = [
        ("oauth_consumer_key", demo.LOGIN),
        ("oauth_nonce", "n-1"),
        ("oauth_signature_method", "HMAC-SHA1"),
        ("oauth_timestamp", "1700000000"),
        ("oauth_version", "1.0"),
    ]
    pairs = [tuple(field.split("=", 1)) for field in fields]
    base = base_string("POST", f"{server.base_url}/api/v2/payout/1001", [*pairs, *oauth])
    assert f"base string    {base}" in out
    assert f"signature      {hmac_sha1(base, demo.CONTROL_KEY)}" in out
    assert "Authorization  OAuth oauth_consumer_key=" in out
    assert "key            <merchant_control_key>&" in out
    assert server.requests == []  # sign never sends


# --- gatekit keys ----------------------------------------------------------------------------------


def test_keys_generate_writes_three_files_and_check_reads_them(capsys, tmp_path):
    out_dir = tmp_path / "keys"
    code, out, _ = run(capsys, "keys", "generate", "--bits", "2048", "--out", str(out_dir))
    assert code == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["private-pkcs1.pem", "private-pkcs8.pem", "public.pem"]
    fingerprint = out.split("SHA-256 fingerprint: ")[1].strip()
    public = load_public_key(out_dir / "public.pem")
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert fingerprint.replace(":", "") == hashlib.sha256(der).hexdigest()
    for name, kind in [("private-pkcs1.pem", "PKCS#1"), ("private-pkcs8.pem", "PKCS#8"), ("public.pem", "public")]:
        code, out, _ = run(capsys, "keys", "check", str(out_dir / name))
        assert code == 0 and kind in out and "2048 bits" in out and fingerprint in out, name
    code, _, err = run(capsys, "keys", "generate", "--bits", "2048", "--out", str(out_dir))
    assert code == 2 and "already holds private-pkcs1.pem, private-pkcs8.pem, public.pem; use --force" in err


def test_keys_generate_refuses_under_2048_bits_before_writing(capsys, tmp_path):
    code, out, err = run(capsys, "keys", "generate", "--bits", "1024", "--out", str(tmp_path / "weak"))
    assert (code, out) == (2, "")
    assert "--bits 1024 refused: the gateway requires at least 2048 bits" in err
    assert not (tmp_path / "weak").exists()


def test_keys_with_a_passphrase_from_the_environment(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("KEY_PASS", "correct horse")
    code, out, _ = run(
        capsys, "keys", "generate", "--bits", "2048", "--out", str(tmp_path), "--passphrase-env", "KEY_PASS"
    )
    assert code == 0 and "private keys encrypted" in out and "correct horse" not in out
    assert b"ENCRYPTED" in (tmp_path / "private-pkcs8.pem").read_bytes()
    private = str(tmp_path / "private-pkcs8.pem")
    code, out, _ = run(capsys, "keys", "check", private, "--passphrase-env", "KEY_PASS")
    assert code == 0 and "PKCS#8, encrypted" in out
    monkeypatch.setenv("KEY_PASS", "battery staple")
    code, _, err = run(capsys, "keys", "check", private, "--passphrase-env", "KEY_PASS")
    assert code == 2 and "passphrase is wrong" in err and "battery staple" not in err
    code, _, err = run(capsys, "keys", "check", private, "--passphrase-env", "UNSET_VARIABLE")
    assert code == 2 and "UNSET_VARIABLE is not set" in err


def test_keys_check_of_the_vector_public_key(capsys):
    code, out, _ = run(capsys, "keys", "check", str(VECTORS / "rsa-test-public.pem"))
    assert code == 0 and "RSA public key (SubjectPublicKeyInfo), 2048 bits" in out
    code, _, err = run(capsys, "keys", "check", str(VECTORS / "control.json"))
    assert code == 2 and "not a PEM key" in err


# --- stopping on signals (listen and simulate) -----------------------------------------------------

STOP_SIGNALS = [signal.SIGINT, signal.SIGTERM]


@pytest.mark.parametrize("signum", STOP_SIGNALS, ids=["Ctrl-C", "SIGTERM"])
def test_stop_on_signals_sets_the_event_and_puts_the_handlers_back(signum):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers can only be installed from the main thread")
    before = [signal.getsignal(s) for s in STOP_SIGNALS]
    with Stop() as stop, stop_on_signals(stop):
        signal.raise_signal(signum)
        assert stop.is_set()
        assert stop.wait(0)
    assert [signal.getsignal(s) for s in STOP_SIGNALS] == before


def test_stop_on_signals_off_the_main_thread_installs_nothing():
    before = [signal.getsignal(s) for s in STOP_SIGNALS]
    seen: list[object] = []

    def body() -> None:
        with Stop() as stop, stop_on_signals(stop):
            seen.append([signal.getsignal(s) for s in STOP_SIGNALS])

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(timeout=10)
    assert seen == [before]


# --- the installed console script ------------------------------------------------------------------


def gatekit_script() -> str:
    beside = Path(sys.executable).parent / "gatekit"
    found = str(beside) if beside.exists() else shutil.which("gatekit")
    assert found, "the gatekit console script is not installed (make install)"
    return found


def test_installed_console_script_calls_the_gateway(server):
    server.reply(ACK)
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    argv = [gatekit_script(), "call", "status", "client_orderid=inv-1", "--base-url", server.base_url]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["paynet-order-id"] == "8056020"
    assert server.last.path == "/paynet/api/v2/status/1001"
    refused = subprocess.run(
        [gatekit_script(), "call", "status", "--base-url", server.base_url],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2 and "client_orderid: is required by status" in refused.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "nosuch"], "unknown profile 'nosuch'; known profiles: simulator, sandbox"),
        (["--profile", "sandbox"], "profile sandbox: missing base_url (GATEWAY_BASE_URL), login (GATEWAY_LOGIN), "),
        (["--tags", "threeds and nosuchtag"], "--tags 'threeds and nosuchtag': no scenario is tagged nosuchtag ("),
        (["--tags", "threeds and"], "--tags 'threeds and': expected not OR left parenthesis OR identifier"),
        (["--tags", "threeds and payouts"], "--tags 'threeds and payouts' selects no scenario"),
        (["--suite", "missing"], "--suite missing: no such directory"),
        (["--suite", "."], "--suite .: no .feature files in it"),
        (["--suite-only"], "--suite-only: give --suite DIR, the folder of your own feature files"),
    ],
    ids=["unknown-profile", "missing-variables", "unknown-tag", "bad-expression", "empty-selection", "no-suite",
         "empty-suite", "suite-only-alone"],
)  # fmt: skip
def test_certify_refuses_what_it_cannot_run_in_one_line(capsys, argv, message):
    code, out, err = run(capsys, "certify", "--no-html", *argv)

    assert (code, out) == (2, "")
    assert err.startswith(f"gatekit certify: {message}") and err.count("\n") == 1, err


def test_the_help_of_secret_flags_says_to_prefer_the_environment(capsys):
    code, out, _ = run(capsys, "call", "--help")
    assert code == 0
    help_text = " ".join(out.split())
    for flag, variable in (
        ("--control-key", "GATEWAY_CONTROL_KEY"),
        ("--private-key-passphrase", "GATEWAY_PRIVATE_KEY_PASSPHRASE"),
    ):
        metavar = flag[2:].upper().replace("-", "_")
        described = help_text.rsplit(f"{flag} {metavar}", 1)[1]  # the last one: the options list, not the usage
        assert described.strip().startswith(f"instead of {variable} (a flag shows in ps and shell history")
    assert "instead of GATEWAY_LOGIN (" not in help_text


# --- help, hints, and what sign prints (issue 11) ----------------------------------------------------


def _parsers(parser: argparse.ArgumentParser, prog: str = "gatekit") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def test_every_help_text_is_plain_and_says_what_each_option_does():
    silent = (argparse._HelpAction, argparse._SubParsersAction, argparse._VersionAction)
    for prog, parser in _parsers(cli.build_parser()):
        text = parser.format_help()
        assert "``" not in text and parser.description, prog
        unexplained = [a.option_strings or a.dest for a in parser._actions if not a.help and not isinstance(a, silent)]
        assert unexplained == [], prog


def test_call_where_nothing_listens_says_what_to_do(capsys):
    with RecordingServer() as gone:
        closed = gone.base_url
    code, _, err = run(capsys, "call", "status", "client_orderid=inv-1", "orderid=1", "--base-url", closed)
    assert code == 4
    assert err.strip().endswith(
        "(connection refused: nothing listens there); check the base_url of profile simulator "
        "(--base-url, GATEWAY_BASE_URL or gatekit.toml)"
    )
    assert call_command.hint(simulator_config()).startswith("start the simulator first (gatekit simulate")


def test_sign_refuses_an_invalid_request_without_saying_it_was_not_sent(capsys):
    code, out, err = run(capsys, "sign", "sale", "client_orderid=inv-1")
    assert (code, out) == (2, "")
    assert err.startswith("gatekit sign: sale: not signed: order_desc: is required by sale;")
    assert err.strip().endswith("(--no-validate signs it as given)") and "sending" not in err


PAYOUT_CARD = ["client_orderid=p-1", "amount=10.42", "currency=EUR", f"credit_card_number={PAN}", f"cvv2={CVV}",
               "card_printed_name=JOHN SMITH", "expire_month=12", "expire_year=2099"]  # fmt: skip
FIXED = ["--no-validate", "--timestamp", "1700000000", "--nonce", "n-1"]


def test_sign_says_which_values_it_masks_and_that_the_signature_is_over_the_real_ones(capsys):
    code, out, _ = run(capsys, "sign", "payout", *PAYOUT_CARD, *FIXED)
    assert code == 0 and PAN not in out and f"cvv2%3D{CVV}" not in out
    masked_line = next(line for line in out.splitlines() if line.startswith("masked "))
    assert masked_line.split(None, 1)[1].startswith("credit_card_number, cvv2: shown masked below; the signature")
    assert "(--show-card-data prints them)" in masked_line
    report = json.loads(run(capsys, "sign", "payout", *PAYOUT_CARD, *FIXED, "--json")[1])
    assert report["masked"] == ["credit_card_number", "cvv2"]
    assert hmac_sha1(report["base_string"], demo.CONTROL_KEY) != report["signature"]  # not reproducible: it says so


def test_sign_with_show_card_data_is_reproducible_from_what_it_prints(capsys):
    report = json.loads(run(capsys, "sign", "payout", *PAYOUT_CARD, *FIXED, "--show-card-data", "--json")[1])
    assert report["masked"] == [] and report["body"]["credit_card_number"] == PAN
    sent = [(name, value) for name, value in report["body"].items()]
    oauth = [(name, value) for name, value in report["oauth"].items()]
    assert report["base_string"] == base_string("POST", report["request"].split(" ", 1)[1], [*sent, *oauth])
    assert hmac_sha1(report["base_string"], demo.CONTROL_KEY) == report["signature"]
    assert demo.CONTROL_KEY not in json.dumps(report)


def test_sign_rsa_with_show_card_data_verifies_with_the_public_key(capsys, tmp_path):
    key = tmp_path / "private.pem"
    key.write_bytes(demo.private_key_pem())
    fields = ["client_orderid=t-1", "amount=5.00", "currency=EUR", f"credit_card_number={PAN}", f"cvv2={CVV}",
              "destination-card-no=4111111111111111"]  # fmt: skip
    argv = ["sign", "transfer", *fields, *FIXED, "--private-key-file", str(key), "--json"]
    masked_report = json.loads(run(capsys, *argv)[1])
    report = json.loads(run(capsys, *argv, "--show-card-data")[1])
    assert masked_report["signature"] == report["signature"]  # the same signature; only what is shown differs
    assert set(masked_report["masked"]) == {"credit_card_number", "cvv2", "destination-card-no"}
    assert rsa_sha256_valid(report["base_string"], report["signature"], demo.public_key_pem())
    assert not rsa_sha256_valid(masked_report["base_string"], report["signature"], demo.public_key_pem())


def test_sign_control_is_reproducible_with_the_merchants_key(capsys):
    report = json.loads(run(capsys, "sign", "sale", *SALE_ARGS, "--json")[1])
    assert report["masked"] == ["credit_card_number", "cvv2"]  # in the body only: the formula holds no card data
    assert sha1_hex(report["input"].replace("<merchant_control_key>", demo.CONTROL_KEY)) == report["control"]


def test_simulate_logs_one_masked_line_per_request():
    lines: list[str] = []
    writer = LineWriter(write=lines.append)  # (its own thread writes the lines: flush() waits for them)
    server = SimulatorServer()
    server.app.add_middleware(RequestLog, writer=writer)
    with server, GatewayClient(server.client_config()) as client:
        ack = client.sale(SALE)
        requests.post(f"{server.base_url}/api/v2/sale/{PAN}", data={"cvv2": CVV}, timeout=10)  # legacy answer
        requests.get(f"{server.root_url}/_sim/journal", timeout=10)
    assert writer.flush()  # every line written (or counted as dropped)
    pattern = r"\d\d:\d\d:\d\d\.\d{3} (?P<rest>.*) \d+ ms"
    shown = [match["rest"] for match in map(re.compile(pattern).fullmatch, lines) if match]
    assert shown == [
        f"POST /paynet/api/v2/sale/1001 sale 200 async-response orderid={ack.orderid}",
        "POST /paynet/api/v2/sale/444455******1111 sale 200 validation-error orderid=-",
        "GET /_sim/journal get_journal 200 - orderid=-",
    ]


def test_simulate_logs_what_the_gateways_front_door_sent_as_the_command_wires_it():
    """``gatekit simulate`` puts the log around the quick front door (``SimulatorServer.add_middleware``): a gateway
    answer's line comes from what the front door sent, without watching ``send``; every kind of answer is still
    told as it was sent (an answer, a refusal, a 413, a dropped connection, a control call)."""
    lines: list[str] = []
    writer = LineWriter(write=lines.append)
    server = SimulatorServer()
    server.add_middleware(RequestLog, writer=writer)  # (as ``gatekit simulate`` does)
    json_accept = {"Accept": "application/vnd.pay+json"}
    with server, GatewayClient(server.client_config()) as client:
        ack = client.sale(SALE)
        requests.post(f"{server.base_url}/api/v2/sale/{PAN}", data={"cvv2": CVV}, headers=json_accept, timeout=10)
        requests.post(f"{server.base_url}/api/v2/status/1001", data=b"x" * 70_000, headers=json_accept, timeout=10)
        server.control().add_fault("status", "drop")
        with pytest.raises(requests.ConnectionError):
            requests.post(f"{server.base_url}/api/v2/status/1001", data={"login": demo.LOGIN}, timeout=10)
        requests.get(f"{server.root_url}/_sim/journal", timeout=10)
    assert writer.flush()
    pattern = r"\d\d:\d\d:\d\d\.\d{3} (?P<rest>.*) \d+ ms"
    shown = [match["rest"] for match in map(re.compile(pattern).fullmatch, lines) if match]
    assert shown == [
        f"POST /paynet/api/v2/sale/1001 sale 200 async-response orderid={ack.orderid}",
        "POST /paynet/api/v2/sale/444455******1111 sale 400 validation-error orderid=-",
        "POST /paynet/api/v2/status/1001 status 413 validation-error orderid=-",
        "POST /_sim/faults post_fault 201 - orderid=-",
        "POST /paynet/api/v2/status/1001 status - error orderid=-",  # (dropped: no status; what it would have been)
        "GET /_sim/journal get_journal 200 - orderid=-",
    ]


def test_simulate_escapes_control_characters_of_a_path_in_its_log_lines():
    """Any web page can make a browser request ``http://127.0.0.1:8080/x%1b]0;pwned%07``: the line escapes it, and
    a ``%0d%0a`` in a path forges no second line (issue 19, #6)."""
    lines: list[str] = []
    writer = LineWriter(write=lines.append)
    server = SimulatorServer()
    server.app.add_middleware(RequestLog, writer=writer)
    with server:
        for path in ("/x%1b]0;pwned%07", "/a%0d%0a10:00:00.000%20GET%20/forged", "/b%e2%80%a8c%c2%9b2J"):
            requests.get(server.root_url + path, timeout=10)
    assert writer.flush()  # every line written (or counted as dropped)
    assert len(lines) == 3 and all(line.isprintable() for line in lines), lines
    assert "/x\\x1b]0;pwned\\x07" in lines[0] and "/a\\x0d\\x0a10:00:00.000 GET /forged" in lines[1]
    assert "/b\\u2028c\\x9b2J" in lines[2]


def test_the_request_log_writes_in_batches_never_blocks_and_says_what_it_dropped():
    """A writer whose output is slow: the requests' ``put`` returns at once, at most MAX_WAITING lines wait, and
    the line after a drop counts the lines that were dropped."""
    import threading

    release, written = threading.Event(), []

    class Slow(io.StringIO):
        def write(self, text: str) -> int:
            release.wait(10)
            written.append(text)
            return len(text)

    writer = LineWriter(Slow())
    writer.MAX_WAITING = 100  # (this writer's own bound)
    entry = (0.0, "GET", "/paynet/api/v2/status/1001", "status", 200, "status-response", "8056020", 0.001)
    started = time.perf_counter()
    for _ in range(1000):
        writer.put(entry)
    assert time.perf_counter() - started < 0.5  # never waits for the output
    release.set()
    assert writer.flush()  # every line written (or counted as dropped)
    text = "".join(written)
    assert text.count("GET /paynet/api/v2/status/1001 status 200 status-response orderid=8056020 1 ms") <= 101
    assert "request lines dropped (the output did not keep up)" in text
    writer.close()


def test_every_option_of_gatekit_simulate_reaches_its_workers_or_is_the_commands_own():
    """``--workers`` starts its workers with a command line of its own: an option added to ``gatekit simulate``
    must be forwarded to them (or said to be the command's), not silently dropped."""
    import argparse

    from toolkit.cli import build_parser
    from toolkit.commands.workers import FORWARDED, OWN

    simulate = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    dests = {action.dest for action in simulate.choices["simulate"]._actions}
    assert dests <= FORWARDED | OWN, sorted(dests - FORWARDED - OWN)
