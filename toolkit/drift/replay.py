"""A recorded run's sequence replayed against a fresh embedded simulator, recorded the same way.

For each scenario: the merchant's requests, in order, with the same operations, amounts, currencies and
outcome choices (a test CVV2 is kept in a recording; a card number is rebuilt from its BIN and last four, a
public test card as itself), signed anew for the simulator's demo merchant; each wait on an order's status
until what the recorded wait ended on (a final status, a step for the payer, ``unknown``); and what the payer
did (open the page, pay with the card, answer the challenge right or wrong, the method step, follow the
status, return to the merchant), by gatekit's payer on the simulator's pages.  What the gateway assigned
(orderid, card-ref-id, serial numbers, addresses, the CRes / PaRes) is mapped from the recording's values to
the replay's as they come.  ``@simulator`` scenarios are not replayed: they need the control API.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from toolkit.callbacks import CallbackReceiver, Received
from toolkit.client import GatewayClient
from toolkit.config import PollSchedule
from toolkit.drift.archive import Archive, Entry
from toolkit.drift.recorded import Recording, read_recording
from toolkit.drift.trace import ASSIGNED, FINAL, answer_of
from toolkit.errors import GatewayError, WaitTimeout
from toolkit.fields import luhn_ok
from toolkit.masking import CVV_MASK, is_cvv_name, is_pan_name
from toolkit.models import Status, StatusResponse
from toolkit.payer import Payer, PayerError
from toolkit.recording import Recorder, RecordingRun, clear, har
from toolkit.signing import new_nonce
from toolkit.simulator.server import SimulatorServer
from toolkit.simulator.settings import SimulatorSettings
from toolkit.testdata.cards import Card
from toolkit.testdata.outcomes import EXAMPLE_CARDS, THREE_DS_V1_CARDS

NOT_IN_THE_TABLE = "999"  # a CVV2 a recording masked (not a test value): "any other" declines, as on the sandbox
WAIT = PollSchedule(intervals=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25), deadline=15.0)
SKEW = 60  # seconds: an OAuth timestamp further than this from the moment it was sent was off on purpose
CALLBACKS_DEADLINE = 5.0  # seconds a replayed scenario waits for the callbacks its recording received
KNOWN_CARDS = (*THREE_DS_V1_CARDS, *EXAMPLE_CARDS)
# How a recording says a request was signed so that it does not verify: the steps' other merchant key, or a
# signature the recording proxy found wrong.  A replay signs those with a key the simulator does not know.
WRONGLY_SIGNED = ("another key", "a wrong signature")
PAN_LENGTHS = range(12, 20)  # a card number has 12 to 19 digits (ISO/IEC 7812); a masked one as many characters


def card_number(masked: str) -> str:
    """A Luhn-valid number with the BIN and last four of ``masked`` (``453897******6732``); a public test card
    (3-D Secure 1.0.2, the examples) as itself; anything longer or shorter than a card number as it is."""
    digits = masked.strip()
    if len(digits) not in PAN_LENGTHS:
        return digits
    for known in KNOWN_CARDS:
        if len(known) == len(digits) and known[:6] == digits[:6] and known[-4:] == digits[-4:]:
            return known
    middle = len(digits) - 10
    for filler in range(10):
        number = digits[:6] + str(filler) * middle + digits[-4:]
        for position in range(6, 6 + middle):
            for digit in "0123456789":
                candidate = number[:position] + digit + number[position + 1 :]
                if luhn_ok(candidate):
                    return candidate
    return digits


def _unmasked(name: str, value: str) -> str:
    if "*" in value and is_pan_name(name) and value.replace("*", "").isdigit():
        return card_number(value)
    if is_cvv_name(name) and value == CVV_MASK:
        return NOT_IN_THE_TABLE
    return value


@dataclass
class ScenarioReplay:
    """One scenario's recording replayed on ``server``; ``recorder`` holds the replay."""

    server: SimulatorServer
    receiver: CallbackReceiver
    archive: Archive
    recorder: Recorder = field(default_factory=Recorder)
    values: dict[str, str] = field(default_factory=dict)  # recorded value -> the replay's
    notes: list[str] = field(default_factory=list)  # what could not be replayed, in words
    last_status: StatusResponse | None = None
    nonces: dict[str, str] = field(default_factory=dict)  # recorded oauth_nonce -> the replay's
    _delivered: object = None  # the page the replay's payer last returned to the merchant from
    login: str | None = ""

    def run(self) -> Recorder:
        entries = self.archive.entries
        logins = Counter(item.fields.get("login") for item in entries if item.kind == "exchange")
        logins.pop(None, None)
        self.login = logins.most_common(1)[0][0] if logins else ""  # the merchant's login in the recording

        self.receiver.clear()
        self.receiver.observers.append(self.recorder)  # (which are this scenario's is for the comparison to say)
        config = self.server.client_config()
        wrong = config.with_overrides(control_key="not-the-merchant-control-key")
        with (
            GatewayClient(config, observers=[self.recorder], validate=False) as client,
            GatewayClient(wrong, observers=[self.recorder], validate=False) as self.wrong_key,
        ):
            self.wrong_key.recording_note = "another key"
            self.client = client
            self.payer = Payer(observers=[self.recorder], merchant_urls=[self.receiver.redirect_url])
            try:
                self._steps(entries)
                self._callbacks(sum(1 for item in entries if item.kind == "callback"))
            finally:
                self.payer.session.close()
                self.receiver.observers.remove(self.recorder)
        return self.recorder

    def _steps(self, entries: list[Entry]) -> None:
        index = 0
        while index < len(entries):
            item = entries[index]
            if item.kind == "exchange" and item.operation == "status":
                group, index = self._wait_group(entries, index)
                self._wait(group)
            elif item.kind == "exchange":
                self._call(item)
            elif item.kind == "visit":
                self._payer(item)
            elif item.kind == "redirect":  # the payer came back to the merchant (a browser does it by itself)
                self._deliver(item.fields)
            index += 1

    @staticmethod
    def _wait_group(entries: list[Entry], start: int) -> tuple[list[Entry], int]:
        """The status polls of one wait (those with the same fields, callbacks and redirects between them) and the
        index of its last poll."""
        key = _unsigned(entries[start].fields)
        group, last = [entries[start]], start
        for index in range(start + 1, len(entries)):
            item = entries[index]
            if item.kind in ("callback", "redirect"):
                continue
            if item.kind != "exchange" or item.operation != "status" or _unsigned(item.fields) != key:
                break
            group.append(item)
            last = index
        return group, last

    # --- the merchant -----------------------------------------------------------------------------------

    def _fields(self, recorded: Mapping[str, str]) -> dict[str, str]:
        """The recorded request's fields for the replay: the demo merchant's login, the replay's receiver, the
        replay's values for what the gateway assigned, card numbers rebuilt; no control (signed anew)."""
        fields: dict[str, str] = {}
        for name, value in recorded.items():
            if name == "control":
                continue
            if name == "login" and value == self.login:  # the merchant's own; another (or none) as recorded
                value = self.client.config.login
            elif name in ("server_callback_url", "notify_url"):
                value = self.receiver.callback_url + _tag(value, "callback")
            elif name == "redirect_url":
                value = self.receiver.redirect_url + _tag(value, "redirect")
            else:
                value = self.values.get(value, _unmasked(name, value))
            fields[name] = value
        return fields

    def _signing(self, item: Entry) -> GatewayClient:
        """The client that signs the replayed request as the recorded one was: the same offset of its OAuth
        timestamp from the moment it was sent (a stale one stays stale), the same nonce again where the
        recording repeated one, another key where the recording says so."""
        client = self.wrong_key if item.signed_with in WRONGLY_SIGNED else self.client
        oauth = dict(re.findall(r'(oauth_\w+)="([^"]*)"', item.header("authorization")))
        if re.fullmatch(r"[0-9]{1,12}", oauth.get("oauth_timestamp", "")):  # (seconds: 12 digits are 31,000 years)
            offset = int(oauth["oauth_timestamp"]) - item.started.timestamp()
            client.clock = (lambda: time.time() + offset) if abs(offset) > SKEW else time.time
        if "oauth_nonce" in oauth:
            nonce = self.nonces.setdefault(oauth["oauth_nonce"], new_nonce())
            client.nonce = lambda: nonce
        return client

    def _call(self, item: Entry) -> None:
        operation = item.operation
        fields = self._fields(item.fields)
        group = "/group/" in item.url
        before = len(self.recorder)
        client = self._signing(item)
        try:
            client.send(client.prepare(operation, fields, use_group=group, validate=False))
        except GatewayError:
            pass  # (the answer, a refusal included, is in the replay's recording: compared there)
        except (ValueError, KeyError) as exc:
            self.notes.append(f"{operation}: not replayed ({exc})")
            return
        self._learn(item.answer, self._answer_since(before))

    def _answer_since(self, before: int) -> dict[str, str]:
        records = self.recorder.records
        return answer_of(har.entry(records[-1])) if len(records) > before else {}

    def _learn(self, recorded: Mapping[str, str], replayed: Mapping[str, str]) -> None:
        """Map what the gateway assigned in the recording to what it assigned in the replay."""
        for name in (*ASSIGNED, "merchant-order-id"):
            if recorded.get(name) and replayed.get(name):
                self.values.setdefault(recorded[name], replayed[name])

    def _wait(self, group: list[Entry]) -> None:
        """Poll the status until what the recorded wait ended on; one poll when it ended on ``processing``."""
        recorded = group[-1].answer
        fields = self._fields(group[0].fields)
        until = _until(recorded, group[-1].status)
        query = {"client_orderid": fields.get("client_orderid"), "orderid": fields.get("orderid")}
        if fields.get("by-request-sn"):
            query["by_request_sn"] = fields["by-request-sn"]
        before = len(self.recorder)
        try:
            if until is None:
                self.last_status = self.client.status(**{k: v for k, v in query.items() if v})
            else:
                wanted = {k: v for k, v in query.items() if v}
                self.last_status = self.client.wait_for_status(until=until, schedule=WAIT, **wanted)  # type: ignore[arg-type]
        except (GatewayError, WaitTimeout):
            pass
        self._learn(recorded, self._answer_since(before))

    # --- the payer -----------------------------------------------------------------------------------

    def _deliver(self, recorded: Mapping[str, str]) -> None:
        """The replay's payer returns to the merchant from the page it is on (once per page); what it brings
        (the CRes, the PaRes...) is mapped from what the recorded payer brought (``recorded``)."""
        page = self.payer.history[-1] if self.payer.history else None
        if page is None or page is self._delivered:
            return
        self._delivered = page
        try:
            delivered = self.payer.return_to_merchant(page)
        except (PayerError, requests.RequestException) as exc:
            self.notes.append(f"the payer's return: {exc}")
            return
        for name, value in recorded.items():
            if name in delivered.fields and value and name not in ("status", "control", "amount", "currency"):
                self.values.setdefault(value, delivered.fields[name])

    def _payer(self, item: Entry) -> None:
        action = dict(item.action or {})
        step = str(action.get("action") or ("open" if item.step.startswith("open the") else ""))
        page = self.payer.history[-1] if self.payer.history else None
        try:
            if step == "open":
                self._open(item.url)
            elif step == "pay" and page is not None:
                destination = str(action.get("destination", ""))  # (a transfer page's, masked: made up alike)
                self.payer.fill_payment_page(page, _card(action.get("card", {})), card_number(destination) or None)
            elif step == "challenge" and page is not None:
                self.payer.answer_challenge(page, self.payer.settings.password(str(action.get("answer", "right"))))
            elif step == "method" and self.last_status is not None:
                self.payer.load_method_url(self.last_status)
            elif step == "follow" and self.last_status is not None:
                self.payer.follow(self.last_status)
            elif step == "return":
                self._deliver(item.fields)
        except (PayerError, requests.RequestException) as exc:
            self.notes.append(f"the payer's {step}: {exc}")

    def _open(self, recorded: str) -> None:
        """Open the replay's page for the recorded one: an address the replay's gateway gave (a payment page, a
        3-D Secure page), never one of the recording's own (the sandbox's, or any a recording names)."""
        url = self.values.get(recorded)
        if url is None:
            self.notes.append(f"the payer's open: {recorded[:200]} is not a page the replay's gateway gave: not opened")
            return
        self.payer.settle(self.payer.open(url))

    def _callbacks(self, expected: int) -> None:
        """Until the replay received as many callbacks as the recording did (a deadline, not a sleep)."""
        deadline = time.monotonic() + CALLBACKS_DEADLINE
        while time.monotonic() < deadline:
            records = self.recorder.records
            if sum(1 for item in records if isinstance(item, Received) and item.kind == "callback") >= expected:
                return
            time.sleep(0.02)


def _unsigned(fields: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in fields.items() if name != "control"}


def _tag(url: str, kind: str) -> str:
    """What follows ``/callback`` or ``/redirect`` in a receiver's address (the order's tag), with its slash."""
    marker = f"/{kind}"
    return url[url.index(marker) + len(marker) :] if marker in url else ""


def _card(recorded: Mapping[str, Any]) -> Card:
    number = str(recorded.get("number", ""))
    cvv2 = str(recorded.get("cvv2", ""))
    if "*" in number:
        number = card_number(number)
        if recorded.get("luhn") is False:  # the payer mistyped it: so does the replay's (the check digit moved)
            number = number[:-1] + str((int(number[-1]) + 1) % 10)
    return Card(
        number,
        str(recorded.get("expire_month", "12")),
        str(recorded.get("expire_year", "2099")),
        NOT_IN_THE_TABLE if cvv2 == CVV_MASK else cvv2,
        str(recorded.get("holder", "")),
    )


def _until(recorded: Mapping[str, str], http_status: int) -> Callable[[StatusResponse], bool] | None:
    """What the recorded wait ended on, as a condition for the replay's (None: it was one poll)."""
    status = recorded.get("status", "")
    if http_status != 200 or recorded.get("type", "").lower() != "status-response":
        return None
    if status in FINAL:
        return lambda r: r.is_final
    if recorded.get("redirect-to") or recorded.get("html"):
        return lambda r: r.is_final or r.needs_payer
    if status == Status.UNKNOWN.value:
        return lambda r: r.is_final or r.status is Status.UNKNOWN
    return None


@dataclass(frozen=True)
class Progress:
    """A scenario replayed (or not: ``skipped`` says why): its place in the run, its name, the seconds it took."""

    number: int
    total: int
    name: str
    seconds: float
    skipped: str = ""


@dataclass
class ReplayedRun:
    """The replay of a recorded run: its recordings' folder, and what could not be replayed (by scenario)."""

    folder: Path
    skipped: dict[str, str]
    notes: dict[str, list[str]]


def replay_run(
    recorded: Path | Recording,
    out: Path,
    settings: SimulatorSettings,
    *,
    progress: Callable[[Progress], None] | None = None,
) -> ReplayedRun:
    """Replay every scenario of the recording ``recorded`` (its folder, or the recording read: all of it is read,
    and checked, before the simulator starts) on a fresh simulator; the replay recorded in ``out``.  ``progress``
    is told of each scenario as it is done."""
    recording = recorded if isinstance(recorded, Recording) else read_recording(Path(recorded))
    if Path(out).resolve() == recording.folder.resolve():
        raise ValueError(f"{out}: the recording replayed: its replay would replace it")
    clear(out)
    skipped: dict[str, str] = {}
    notes: dict[str, list[str]] = {}
    with SimulatorServer(settings) as server, CallbackReceiver(settings.merchants[0].control_key) as receiver:
        summary = {name: getattr(settings, name) for name in ("latency", "page_style", "lenient")}
        run = RecordingRun(out, profile="simulator (replay)", base_url="embedded simulator", simulator=summary)
        total = len(recording.scenarios)
        for number, scenario in enumerate(recording.scenarios, start=1):
            name, began = scenario.name, time.monotonic()
            if "simulator" in scenario.tags:
                skipped[name] = "needs the simulator's control API (@simulator): not replayed"
            else:
                replay = ScenarioReplay(server, receiver, scenario.archive)
                run.add(name, replay.run(), nodeid=scenario.nodeid, tags=list(scenario.tags), started=scenario.started)
                if replay.notes:
                    notes[name] = replay.notes
            if progress is not None:
                progress(Progress(number, total, name, time.monotonic() - began, skipped.get(name, "")))
    return ReplayedRun(out, skipped, notes)


__all__ = ["Progress", "ReplayedRun", "ScenarioReplay", "card_number", "replay_run"]
