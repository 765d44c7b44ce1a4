"""The control API described over HTTP for clients in any language (issue 38, #5): ``GET /_sim/`` lists the routes
with their arguments, ``GET /_sim/openapi.json`` is an OpenAPI 3.1 document of them, both read from the one table
the router is built from (``control.ROUTES``); a bad call is one 400 that names every problem and the valid values;
``POST /_sim/callbacks/{orderid}/resend`` sends an order's last callback again."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import requests
import schemathesis
from schemathesis.specs.openapi.definitions import OPENAPI_31

from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.simulator.web import control
from toolkit.testdata import sale_fields


def call(server: SimulatorServer, method: str, path: str, **kwargs: Any) -> requests.Response:
    return requests.request(method, f"{server.root_url}{path}", timeout=10, **kwargs)


def table() -> set[tuple[str, str]]:
    return {(route.method, control.PREFIX + route.path) for route in control.ROUTES}


# --- GET /_sim/ ------------------------------------------------------------------------------------------


def test_the_index_lists_every_route_of_the_table_with_its_arguments(server: SimulatorServer) -> None:
    answer = call(server, "GET", "/_sim/")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    index = answer.json()
    assert index["openapi"] == "/_sim/openapi.json"
    assert {(route["method"], route["path"]) for route in index["routes"]} == table()
    assert all(route["summary"] for route in index["routes"])
    faults = next(r for r in index["routes"] if (r["method"], r["path"]) == ("POST", "/_sim/faults"))
    arguments = {argument["name"]: argument for argument in faults["arguments"]}
    assert list(arguments) == ["target", "kind", "count", "seconds"]
    assert arguments["target"]["required"] and arguments["target"]["in"] == "body"
    assert {"sale", "*", "callback"} <= set(arguments["target"]["choices"])
    assert arguments["kind"]["choices"] == ["error", "delay", "drop", "fail", "duplicate"]
    assert (arguments["count"]["type"], arguments["count"]["minimum"], arguments["count"]["maximum"]) == (
        "integer",
        1,
        10_000,
    )
    assert arguments["count"]["default"] == 1 and "from 1 to 10000" in arguments["count"]["valid"]
    status = next(r for r in index["routes"] if r["path"] == "/_sim/transactions/{orderid}/status")
    assert [(a["name"], a["in"]) for a in status["arguments"]] == [
        ("orderid", "path"),
        ("status", "body"),
        ("error_code", "body"),
        ("error_message", "body"),
    ]


def test_every_route_of_the_table_is_served_and_nothing_else_is_under_the_prefix(server: SimulatorServer) -> None:
    """The router is built from the table: each listed route answers (a refusal of its own, never "not a route")."""
    for method, path in table():
        answer = call(server, method, path.replace("{orderid}", "1"), params={"timeout": "0"} if "callbacks" in path
                      else None)  # fmt: skip
        assert answer.headers["content-type"] == "application/json", (method, path)
        assert answer.json().get("field") != "path", (method, path, answer.text)
    unknown = call(server, "GET", "/_sim/nosuch")
    assert unknown.status_code == 404 and unknown.json()["field"] == "path"
    assert "GET /_sim/ lists" in unknown.json()["error"]
    wrong_method = call(server, "POST", "/_sim/clock")
    assert wrong_method.status_code == 405 and wrong_method.json()["field"] == "method"
    assert "GET /_sim/clock" in wrong_method.json()["error"]


# --- GET /_sim/openapi.json -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def document(server: SimulatorServer) -> dict[str, Any]:
    answer = call(server, "GET", "/_sim/openapi.json")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    body: dict[str, Any] = answer.json()
    return body


def test_the_openapi_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    jsonschema.validate(document, OPENAPI_31, cls=jsonschema.Draft202012Validator)  # the specification's own schema
    for path_item in document["paths"].values():
        for operation in path_item.values():
            schemas = [p["schema"] for p in operation.get("parameters", [])]
            schemas += [c["schema"] for c in operation.get("requestBody", {}).get("content", {}).values()]
            for schema in schemas:
                jsonschema.Draft202012Validator.check_schema(schema)
    loaded = schemathesis.openapi.from_dict(document)
    assert len(list(loaded.get_all_operations())) == len(control.ROUTES)


def test_the_openapi_document_describes_the_table(server: SimulatorServer, document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0" and document["servers"] == [{"url": server.root_url}]
    described = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert described == table()
    fault = document["paths"]["/_sim/faults"]["post"]
    body = fault["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["target", "kind"] and body["additionalProperties"] is False
    assert body["properties"]["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10_000,
        "default": 1,
        "description": body["properties"]["count"]["description"],
    }
    assert set(fault["responses"]) >= {"201", "400"}
    problems = fault["responses"]["400"]["content"]["application/json"]["schema"]
    assert problems == {"$ref": "#/components/schemas/Refusal"}
    status = document["paths"]["/_sim/transactions/{orderid}/status"]["post"]
    assert status["parameters"][0]["name"] == "orderid" and status["parameters"][0]["in"] == "path"
    assert {"404", "409"} <= set(status["responses"])
    journal = document["paths"]["/_sim/journal"]["get"]
    assert [(p["name"], p["in"]) for p in journal["parameters"]] == [("login", "query"), ("limit", "query")]


def test_a_control_token_is_described_as_bearer(document: dict[str, Any]) -> None:
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": document["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert document["security"] == [{}, {"bearer": []}]  # loopback without a token, or the --control-token


# --- one refusal that names every problem ---------------------------------------------------------------


def test_a_bad_fault_plan_is_one_answer_naming_every_problem_and_the_valid_values(server: SimulatorServer) -> None:
    body = {"target": "sael", "kind": "eror", "count": 0, "seconds": "soon", "colour": "red"}
    answer = call(server, "POST", "/_sim/faults", json=body)
    assert answer.status_code == 400 and answer.headers["content-type"] == "application/json"
    refusal = answer.json()
    assert [p["field"] for p in refusal["problems"]] == ["target", "kind", "count", "seconds", "colour"]
    problems = {p["field"]: p for p in refusal["problems"]}
    assert "did you mean 'sale'?" in problems["target"]["error"] and "callback" in problems["target"]["valid"]
    assert problems["kind"]["error"].startswith("kind: must be one of error|delay|drop|fail|duplicate")
    assert problems["count"]["valid"] == "a whole number from 1 to 10000"
    assert problems["seconds"]["error"].startswith("seconds: must be a number")
    assert problems["colour"]["error"] == (
        "colour: POST /_sim/faults takes no colour; its arguments are target, kind, count, seconds"
    )
    assert refusal["field"] == "target"  # (the first, as a client of one problem at a time reads it)
    assert refusal["error"] == "; ".join(p["error"] for p in refusal["problems"])
    assert refusal["route"] == "POST /_sim/faults" and refusal["see"] == "GET /_sim/"


def test_problems_of_the_combination_come_with_those_of_the_values(server: SimulatorServer) -> None:
    answer = call(server, "POST", "/_sim/faults", json={"target": "sale", "kind": "fail", "seconds": 3})
    assert answer.status_code == 400
    problems = answer.json()["problems"]
    assert [p["field"] for p in problems] == ["kind", "seconds"]
    assert "use error|delay|drop" in problems[0]["error"] and "only a delay takes seconds" in problems[1]["error"]


def test_a_bad_path_and_a_bad_body_are_refused_together(server: SimulatorServer) -> None:
    answer = call(server, "POST", "/_sim/transactions/abc/status", json={"status": "approve", "error_code": [1]})
    assert answer.status_code == 400
    problems = {p["field"]: p for p in answer.json()["problems"]}
    assert list(problems) == ["orderid", "status", "error_code"]
    assert problems["status"]["valid"] == "one of approved|declined|filtered|error|unknown"
    assert "did you mean 'approved'?" in problems["status"]["error"]
    assert problems["orderid"]["valid"] == "a gateway orderid (digits)"


def test_an_argument_given_in_the_query_instead_of_the_body_is_named(server: SimulatorServer) -> None:
    answer = call(server, "POST", "/_sim/clock/advance", params={"seconds": "60"})
    assert answer.status_code == 400
    problems = answer.json()["problems"]
    assert [p["field"] for p in problems] == ["seconds", "seconds"]
    assert problems[0]["error"] == "seconds: is required: a number from 0 to 316224000"
    assert problems[1]["error"] == "seconds: POST /_sim/clock/advance takes seconds in its JSON body, not the query"


def test_a_refusal_of_one_problem_has_the_same_shape(server: SimulatorServer) -> None:
    answer = call(server, "GET", "/_sim/transactions/1")
    assert answer.status_code == 404
    refusal = answer.json()
    assert refusal["field"] == "orderid" and refusal["problems"] == [{"field": "orderid", "error": refusal["error"]}]


# --- resending a callback --------------------------------------------------------------------------------


def test_resend_sends_the_orders_last_callback_again(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    ack = client.sale(sale_fields(server_callback_url=receiver.callback_url))
    first = receiver.wait_for_callback(orderid=ack.orderid)
    control.wait_for_callbacks(ack.orderid, attempts=1)

    resent = control.resend_callbacks(ack.orderid)

    assert [delivery["url"] for delivery in resent] == [receiver.callback_url]
    (_, again) = control.wait_for_callbacks(ack.orderid, attempts=2)
    assert again["id"] == resent[0]["id"] and again["state"] == "delivered"
    arrivals = receiver.callbacks(orderid=ack.orderid)
    assert len(arrivals) == 2 and arrivals[1].params == first.params and arrivals[1].control_ok


def test_resend_of_an_order_without_a_callback_says_why(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    ack = client.sale(sale_fields())
    answer = call(server, "POST", f"/_sim/callbacks/{ack.orderid}/resend")
    assert answer.status_code == 409 and answer.json()["field"] == "orderid"
    assert "no callback" in answer.json()["error"]
