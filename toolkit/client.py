"""GatewayClient: one method per catalogue operation, signing, typed responses, waiting.

    client = GatewayClient(load_config("simulator"))
    ack = client.sale(client_orderid="inv-1", amount=Decimal("10.42"), currency="EUR", ...)
    final = client.wait_for_final_status(ack)

Requests are form-encoded, ask for ``application/vnd.pay+json``, carry a User-Agent and a
timeout.  Bad input is refused before sending (``InvalidRequestError`` names the field).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import requests

from toolkit import hosted_answers, transport
from toolkit._version import __version__
from toolkit.auth import ControlAuth, OAuthAuth, SignatureTrace
from toolkit.config import GatewayConfig, PollSchedule
from toolkit.errors import InvalidRequestError, ProtocolError, TransportError, error_from_response
from toolkit.exchange import Answered, Exchange, Sent
from toolkit.fields import wire_name
from toolkit.masking import mask_text
from toolkit.models import (
    RESPONSE_MODELS,
    AsyncResponse,
    CardInfoResponse,
    CardRefResponse,
    EphemeralTicketResponse,
    FormResponse,
    HostedSaleResponse,
    HostedStatusResponse,
    RecurringPaymentResponse,
    Response,
    Status,
    StatusResponse,
)
from toolkit.observing import RecorderAlias
from toolkit.operations import LOGIN, AnswerStyle, AuthScheme, Operation, get_operation
from toolkit.signing import new_nonce
from toolkit.validation import Problem, request_problems
from toolkit.waiting import PollAttempt, Waker, wait_for_status
from toolkit.wire import (
    FORM_TYPE,
    MEDIA_TYPE,
    DecodeError,
    check_answer,
    content_type_problem,
    decode_request_body,
    decode_response,
    encode_form,
)

if TYPE_CHECKING:
    from toolkit.recording import Recorder

Fields = Mapping[str, object]
Observer = Callable[[Exchange], None]
# Operations that add a transaction to an existing order (same orderid, their own serial-number).
LATER_TRANSACTIONS = frozenset({"capture", "void", "return", "payout_pay"})
R = TypeVar("R", bound=Response)


def wire_value(value: object, name: str) -> str:
    """How a Python value is written in a form body (Decimal as is, bools as true/false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        raise InvalidRequestError("request", [Problem(name, "pass money as Decimal or str, never float")])
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def wire_fields(fields: Fields | None, extra: Fields, operation: Operation | None = None) -> list[tuple[str, str]]:
    """Merge a mapping and keyword fields; Python names become the operation's wire spellings
    (``cres`` -> ``cRes``, ``client_orderid`` -> ``client-order-id`` where the gateway spells it so);
    None is dropped.
    """
    spell = _spelling(operation) if operation is not None else wire_name
    merged = {spell(name): value for name, value in {**(fields or {}), **extra}.items()}
    return [(name, wire_value(value, name)) for name, value in merged.items() if value is not None]


# Operation.wire_name looks the catalogue up on every call: its answers, per operation, are kept here.
_SPELLINGS: dict[int, tuple[Operation, dict[str, str]]] = {}


def _spelling(operation: Operation) -> Callable[[str], str]:
    """``operation.wire_name``, remembered per name (the operation is kept with its answers: ids stay unique)."""
    entry = _SPELLINGS.get(id(operation))
    if entry is None or entry[0] is not operation:
        entry = _SPELLINGS[id(operation)] = (operation, {})
    known = entry[1]

    def spell(name: str) -> str:
        wire = known.get(name)
        if wire is None:
            wire = known[name] = operation.wire_name(name)
        return wire

    return spell


@dataclass(frozen=True)
class PreparedCall:
    """A signed request ready to send, with what was signed (``gatekit sign`` prints it)."""

    operation: Operation
    request: requests.PreparedRequest
    fields: list[tuple[str, str]]
    trace: SignatureTrace | None


class GatewayClient:
    """A complete client of the gateway: one method per operation of ``toolkit.operations``."""

    max_response_bytes = transport.MAX_RESPONSE_BYTES  # a bigger answer is a ProtocolError

    def __init__(
        self,
        config: GatewayConfig,
        *,
        session: requests.Session | None = None,
        observers: Iterable[Observer] = (),
        clock: Callable[[], float] = time.time,
        nonce: Callable[[], str] = new_nonce,
        validate: bool = True,
        record: Recorder | str | Path | None = None,
    ) -> None:
        """``observers`` get the ``Exchange`` record of every exchange (built once, masked): the one hook list.
        A ``toolkit.recording.Recorder`` is an observer like any other.  ``record``: a recorder to add to them,
        or a path: the client's own recorder, written there (HAR 1.2) on ``close()``."""
        self.config = config
        self.session = session or requests.Session()
        self.observers: list[Observer] = list(observers)
        self.clock = clock
        self.nonce = nonce
        self.validate = validate
        self._endpoints: dict[str, str] = {}  # orderid -> concrete end-point-id (group addressing)
        self._later: set[str] = set()  # serial-numbers of later transactions of an order (capture, return...)
        self._record_to: Path | None = None
        if isinstance(record, (str, Path)):
            from toolkit.recording import Recorder

            self._record_to, record = Path(record), Recorder()
        self._recorder: Recorder | None = record  # (the one the deprecated ``recorder`` attribute replaces)
        if record is not None:
            self.observers.append(record)
        # How this client signs, for a recording, when not as its profile says ("another key"): a replay too.
        self.recording_note = ""

    recorder = RecorderAlias["Recorder"](
        "exchanges", "GatewayClient(config, observers=[recorder]) or client.observers.append(recorder)"
    )

    def __repr__(self) -> str:
        return f"GatewayClient(profile={self.config.profile!r}, base_url={self.config.base_url!r})"

    def close(self) -> None:
        self.session.close()
        if self._recorder is not None and self._record_to is not None:
            self._recorder.write(self._record_to, title=f"gatekit client, profile {self.config.profile}")

    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the generic call ----------------------------------------------------------------------

    def prepare(
        self,
        operation: str | Operation,
        fields: Fields | None = None,
        /,
        *,
        endpoint_id: str | None = None,
        group_id: str | None = None,
        use_group: bool = False,
        validate: bool | None = None,
        **kwargs: object,
    ) -> PreparedCall:
        """Build, check and sign a request without sending it."""
        op = operation if isinstance(operation, Operation) else get_operation(operation)
        try:
            pairs = wire_fields(fields, kwargs, op)
        except InvalidRequestError as exc:
            raise InvalidRequestError(op.name, exc.problems) from None
        if LOGIN in op.required and all(name != LOGIN for name, _ in pairs):  # behaviour section 10
            pairs.insert(0, (LOGIN, self.config.login))
        strict = self.validate if validate is None else validate
        if strict:
            problems = request_problems(op, dict(pairs))
            if problems:
                raise InvalidRequestError(op.name, problems)
        path_id, path = self._address(op, pairs, endpoint_id, group_id, use_group)
        auth = self._auth(op, path_id, strict=strict, fields=pairs)
        url = self.config.base_url + path
        headers = {
            "Accept": MEDIA_TYPE,
            "Content-Type": FORM_TYPE,
            "User-Agent": f"{self.config.user_agent}/{__version__}",
        }
        if auth is not None:  # the signing hook writes the body from the pairs: encoded once
            prepared = transport.prepare(self.session, url, headers, auth)
        else:
            body = encode_form(pairs).encode("utf-8")
            prepared = self.session.prepare_request(requests.Request("POST", url, data=body, headers=headers))
        return PreparedCall(op, prepared, pairs, getattr(auth, "trace", None))

    def call(self, operation: str | Operation, fields: Fields | None = None, /, **kwargs: Any) -> Response:
        """Send any catalogue operation; returns the typed response of that operation."""
        prepared = self.prepare(operation, fields, **kwargs)
        return self.send(prepared)

    def send(self, call: PreparedCall) -> Response:
        """Send a prepared call; the typed response, or the ``GatewayError`` the answer stands for.

        ``config.timeout`` is the call's deadline (connect, request, answer head and body together);
        an answer above ``max_response_bytes`` or one that is not a gateway response is a ``ProtocolError``.
        """
        op, request = call.operation, call.request
        wrong_type = content_type_problem(request.headers.get("Content-Type", "")) if self.validate else ""
        if wrong_type:  # (a prepared call whose headers were changed: refused as the gateway would, behaviour 12)
            raise InvalidRequestError(op.name, [Problem("Content-Type", wrong_type.removeprefix("Content-Type: "))])
        started = time.monotonic()
        try:
            answer = transport.exchange(
                self.session, request, deadline=self.config.timeout, max_bytes=self.max_response_bytes
            )
        except transport.NoAnswer as exc:
            self._notify(op, request, None, started, call.trace, error=str(exc.__cause__ or exc))
            raise TransportError(f"no answer from {request.url}{exc}", operation=op.name) from exc
        except transport.TooLarge as exc:
            self._notify(op, request, None, started, call.trace, error=str(exc))
            raise ProtocolError(f"{exc} (from {request.url})", operation=op.name) from None
        self._notify(op, request, answer, started, call.trace)
        if op.answers is AnswerStyle.HOSTED_FIELDS:  # JSON with its types, or a refusal's text/plain reason
            return hosted_answers.read(op, answer.status_code, answer.content)
        try:
            body = decode_response(answer.content)
            check_answer(body)
        except DecodeError as exc:
            raise ProtocolError(
                f"HTTP {answer.status_code} {answer.headers.get('Content-Type', '')}: {mask_text(str(exc))}",
                operation=op.name,
                http_status=answer.status_code,
            ) from None
        error = error_from_response(op, answer.status_code, body)
        if error is not None:
            raise error
        model: Response = RESPONSE_MODELS[op.response].from_mapping(body)
        self._remember_endpoint(model)
        if op.name in LATER_TRANSACTIONS and model.serial_number:
            self._later.add(model.serial_number)
        return model

    def _address(
        self,
        op: Operation,
        fields: list[tuple[str, str]],
        endpoint_id: str | None,
        group_id: str | None,
        use_group: bool,
    ) -> tuple[str, str]:
        """Which id goes in the path: explicit > group if asked > the order's endpoint > configured."""
        config = self.config
        if use_group and endpoint_id is None and group_id is None:
            group_id = self._group_id(op)
        if endpoint_id is None and group_id is None:
            orderid = next((value for name, value in fields if name == "orderid"), "") if self._endpoints else ""
            remembered = self._endpoints.get(orderid)
            if config.endpoint_id is None and op.group and config.endpoint_group_id:
                group_id = config.endpoint_group_id
            elif remembered or config.endpoint_id:
                endpoint_id = remembered or config.endpoint_id
            else:
                raise InvalidRequestError(
                    op.name, [Problem("endpointId", f"{op.name} needs an endpoint id (only a group id is configured)")]
                )
        path_id = cast(str, group_id if group_id is not None else endpoint_id)
        try:
            return path_id, op.url_path(endpoint_id=endpoint_id, group_id=group_id)
        except ValueError as exc:
            raise InvalidRequestError(op.name, [Problem("endpointGroupId", str(exc))]) from None

    def _group_id(self, op: Operation) -> str:
        """The configured endpoint group id, for an operation that may be addressed by group."""
        if not op.group:
            raise InvalidRequestError(op.name, [Problem("endpointGroupId", f"{op.name} has no group address")])
        if not self.config.endpoint_group_id:
            raise InvalidRequestError(
                op.name, [Problem("endpointGroupId", "no endpoint group id is configured (GATEWAY_ENDPOINT_GROUP_ID)")]
            )
        return self.config.endpoint_group_id

    def _auth(
        self, op: Operation, path_id: str, *, strict: bool = True, fields: list[tuple[str, str]] | None = None
    ) -> requests.auth.AuthBase | None:
        """The request's signing hook; with ``fields`` it also writes the body (prepared with ``data=None``)."""
        config = self.config
        if op.auth is AuthScheme.CONTROL:
            return ControlAuth(
                op, path_id=path_id, login=config.login, control_key=config.control_key, strict=strict, fields=fields
            )
        if op.auth.is_oauth:
            rsa_key = config.private_key if op.auth is AuthScheme.OAUTH_RSA_SHA256 else None
            return OAuthAuth(
                op.auth,
                login=config.login,
                control_key=config.control_key,
                private_key=rsa_key,
                clock=self.clock,
                nonce=self.nonce,
                fields=fields,
            )
        return None

    def _remember_endpoint(self, model: Response) -> None:
        if isinstance(model, AsyncResponse) and model.orderid and model.end_point_id:
            self._endpoints[model.orderid] = model.end_point_id

    def _notify(
        self,
        op: Operation,
        request: requests.PreparedRequest,
        answer: requests.Response | None,
        started: float,
        trace: SignatureTrace | None,
        error: str | None = None,
    ) -> None:
        """The exchange's record, built once and handed to every observer."""
        if not self.observers:  # nobody looks: no record is built, nothing is decoded or masked
            return
        headers, fields = dict(request.headers), decode_request_body(request.body)  # as sent, control included
        sent = Sent(request.method or "POST", request.url or "", headers, fields, signed_with=self.recording_note)
        if answer is None:
            answered = Answered(None, error=error)
        else:
            answered = Answered(answer.status_code, dict(answer.headers), answer.text, error=error)
        exchange = Exchange.capture(op.name, sent, answered, elapsed=time.monotonic() - started, signature=trace)
        for observer in self.observers:
            observer(exchange)

    # --- waiting for outcomes --------------------------------------------------------------------

    def wait_for_status(
        self,
        order: AsyncResponse | None = None,
        *,
        client_orderid: str | None = None,
        orderid: str | None = None,
        until: Callable[[StatusResponse], bool] = lambda r: r.is_final,
        awaiting: str = "final status",
        schedule: PollSchedule | None = None,
        waker: Waker | None = None,
        on_attempt: Callable[[PollAttempt], None] | None = None,
        by_request_sn: str | None = None,
    ) -> StatusResponse:
        """Poll ``status`` until ``until`` holds, on the profile's schedule (or ``schedule``).

        ``awaiting`` says what ``until`` waits for, for the WaitTimeout message.  The acknowledgement
        of a later transaction of an order (capture, return, void, payout-pay) is followed by its own
        serial-number (``by-request-sn``): the order's status is that of its latest transaction.
        """
        client_orderid = client_orderid or (order.client_orderid if order else None)
        orderid = orderid or (order.orderid if order else None)
        if not client_orderid:
            raise InvalidRequestError("status", [Problem("client_orderid", "is needed to wait for a status")])
        if by_request_sn is None and order is not None and order.serial_number in self._later:
            by_request_sn = order.serial_number
        extra = {"by_request_sn": by_request_sn} if by_request_sn else {}

        def poll() -> StatusResponse:
            return self.status(client_orderid=client_orderid, orderid=orderid, **extra)

        return wait_for_status(
            poll,
            schedule or self.config.poll,
            until=until,
            waker=waker,
            on_attempt=on_attempt,
            describe=f"order {orderid or client_orderid}",
            awaiting=awaiting,
        )

    def wait_for_final_status(self, order: AsyncResponse | None = None, **kwargs: Any) -> StatusResponse:
        """Wait for approved, declined, filtered or error (``processing``/``unknown`` poll on)."""
        return self.wait_for_status(order, until=lambda r: r.is_final, **kwargs)

    def wait_for_payer_or_final(self, order: AsyncResponse | None = None, **kwargs: Any) -> StatusResponse:
        """Wait until the payer must act (3-D Secure ``html``/``redirect-to``) or the status is final."""
        return self.wait_for_status(
            order, until=lambda r: r.is_final or r.needs_payer, awaiting="payer step or final status", **kwargs
        )

    def wait_for(self, status: Status, order: AsyncResponse | None = None, **kwargs: Any) -> StatusResponse:
        """Wait for one particular status, e.g. ``Status.UNKNOWN`` (stops early on a final one)."""
        return self.wait_for_status(
            order,
            until=lambda r: r.status is status or r.is_final,
            awaiting=f"{status.value} or final status",
            **kwargs,
        )

    def wait_for_status_v4(
        self,
        sale: AsyncResponse | None = None,
        *,
        client_orderid: str | None = None,
        orderid: str | None = None,
        until: Callable[[HostedStatusResponse], bool] = lambda r: r.is_final,
        awaiting: str = "final status",
        schedule: PollSchedule | None = None,
        waker: Waker | None = None,
        on_attempt: Callable[[PollAttempt], None] | None = None,
    ) -> HostedStatusResponse:
        """Poll ``status_v4`` for a Hosted Fields order (the answer of ``sale_v4``) until ``until`` holds, on the
        profile's schedule, as ``wait_for_status`` polls ``status``: ``processing`` polls on (with ``redirect_to``
        the payer must act first: ``wait_for_payer_or_final_v4`` stops there), a refusal ends the wait."""
        orderid = orderid or (sale.orderid if sale else None)
        client_orderid = client_orderid or (sale.client_orderid if sale else None)
        missing = [Problem(name, "is needed to wait for a status") for name, value in
                   (("client_orderid", client_orderid), ("orderid", orderid)) if not value]  # fmt: skip
        if missing:
            raise InvalidRequestError("status_v4", missing)

        def poll() -> HostedStatusResponse:
            return self.status_v4(client_orderid=client_orderid, orderid=orderid)

        return wait_for_status(
            poll,
            schedule or self.config.poll,
            until=until,
            waker=waker,
            on_attempt=on_attempt,
            describe=f"order {orderid}",
            awaiting=awaiting,
            operation="status_v4",
        )

    def wait_for_payer_or_final_v4(self, sale: AsyncResponse | None = None, **kwargs: Any) -> HostedStatusResponse:
        """Wait until a Hosted Fields order sends the payer to 3-D Secure (``redirect_to``) or its status is final."""
        return self.wait_for_status_v4(
            sale, until=lambda r: r.is_final or r.needs_payer, awaiting="payer step or final status", **kwargs
        )

    # --- one method per operation (toolkit.operations) -------------------------------------------

    def _typed(self, name: str, cls: type[R], fields: Fields | None, kwargs: Fields) -> R:
        return cast(R, self.call(name, fields, **kwargs))

    def sale(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("sale", AsyncResponse, fields, kw)

    def sale_form(self, fields: Fields | None = None, /, **kw: Any) -> FormResponse:
        return self._typed("sale_form", FormResponse, fields, kw)

    def preauth(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("preauth", AsyncResponse, fields, kw)

    def preauth_form(self, fields: Fields | None = None, /, **kw: Any) -> FormResponse:
        return self._typed("preauth_form", FormResponse, fields, kw)

    def payment_form(self, fields: Fields | None = None, /, **kw: Any) -> FormResponse:
        return self._typed("payment_form", FormResponse, fields, kw)

    def capture(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("capture", AsyncResponse, fields, kw)

    def void(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("void", AsyncResponse, fields, kw)

    def return_(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("return", AsyncResponse, fields, kw)

    def status(self, fields: Fields | None = None, /, **kw: Any) -> StatusResponse:
        return self._typed("status", StatusResponse, fields, kw)

    def account_verification(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("account_verification", AsyncResponse, fields, kw)

    def account_verification_form(self, fields: Fields | None = None, /, **kw: Any) -> FormResponse:
        return self._typed("account_verification_form", FormResponse, fields, kw)

    def upload_method_url_result(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("upload_method_url_result", AsyncResponse, fields, kw)

    def upload_cres_result(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("upload_cres_result", AsyncResponse, fields, kw)

    def upload_pares_result(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("upload_pares_result", AsyncResponse, fields, kw)

    def create_card_ref(self, fields: Fields | None = None, /, **kw: Any) -> CardRefResponse:
        return self._typed("create_card_ref", CardRefResponse, fields, kw)

    def create_card_ref_v4(self, fields: Fields | None = None, /, **kw: Any) -> CardRefResponse:
        return self._typed("create_card_ref_v4", CardRefResponse, fields, kw)

    def get_card_info(self, fields: Fields | None = None, /, **kw: Any) -> CardInfoResponse:
        return self._typed("get_card_info", CardInfoResponse, fields, kw)

    def make_rebill(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("make_rebill", AsyncResponse, fields, kw)

    def make_rebill_sale(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("make_rebill_sale", AsyncResponse, fields, kw)

    def make_rebill_preauth(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        """A hold on a stored card: capture, void and return it as a card preauth."""
        return self._typed("make_rebill_preauth", AsyncResponse, fields, kw)

    def create_recurring_payment(self, fields: Fields | None = None, /, **kw: Any) -> RecurringPaymentResponse:
        return self._typed("create_recurring_payment", RecurringPaymentResponse, fields, kw)

    def pan_eligibility_send(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("pan_eligibility_send", AsyncResponse, fields, kw)

    def transfer(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("transfer", AsyncResponse, fields, kw)

    def transfer_by_ref(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("transfer_by_ref", AsyncResponse, fields, kw)

    def transfer_by_ref_v4(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("transfer_by_ref_v4", AsyncResponse, fields, kw)

    def transfer_form(self, fields: Fields | None = None, /, **kw: Any) -> FormResponse:
        """A hosted card-to-card transfer: the payer enters both cards on the gateway's page (``redirect_url``)."""
        return self._typed("transfer_form", FormResponse, fields, kw)

    def payout(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("payout", AsyncResponse, fields, kw)

    def payout_form(self, fields: Fields | None = None, /, **kw: Any) -> FormResponse:
        return self._typed("payout_form", FormResponse, fields, kw)

    def payout_check(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("payout_check", AsyncResponse, fields, kw)

    def payout_pay(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("payout_pay", AsyncResponse, fields, kw)

    def payout_v4(self, fields: Fields | None = None, /, **kw: Any) -> AsyncResponse:
        return self._typed("payout_v4", AsyncResponse, fields, kw)

    # Hosted Fields (hosted-fields.md section 3): the merchant's three server calls

    def create_ephemeral_ticket(self, fields: Fields | None = None, /, **kw: Any) -> EphemeralTicketResponse:
        """A single-use ticket for one checkout page load: the page's SDK exchanges it for a card token."""
        return self._typed("create_ephemeral_ticket", EphemeralTicketResponse, fields, kw)

    def sale_v4(self, fields: Fields | None = None, /, **kw: Any) -> HostedSaleResponse:
        """A sale of the card behind ``hosted_fields_token`` (the card fields beside it are refused before sending)."""
        return self._typed("sale_v4", HostedSaleResponse, fields, kw)

    def status_v4(self, fields: Fields | None = None, /, **kw: Any) -> HostedStatusResponse:
        """The order's status as the Hosted Fields pages read it: ``redirect_to`` while the payer must act."""
        return self._typed("status_v4", HostedStatusResponse, fields, kw)
