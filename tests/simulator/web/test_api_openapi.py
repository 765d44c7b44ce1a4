"""The OpenAPI document at /paynet/openapi.json: generated from the catalogue, and true of the simulator."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from toolkit.operations import OPERATIONS, AuthScheme, Operation
from toolkit.simulator import SimulatorServer
from toolkit.wire import MEDIA_TYPE

OPS = list(OPERATIONS.values())


@pytest.fixture(scope="module")
def document(server: SimulatorServer) -> dict[str, Any]:
    answer = requests.get(server.base_url + "/openapi.json", timeout=30)
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/json"
    body: dict[str, Any] = answer.json()
    return body


def test_the_document_names_this_simulator(server: SimulatorServer, document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0" and document["info"]["version"] == "dev"
    assert document["servers"] == [{"url": server.base_url}]


def test_every_catalogue_path_and_no_other(document: dict[str, Any]) -> None:
    expected = {op.path for op in OPS} | {op.group_path for op in OPS if op.group}
    assert set(document["paths"]) == expected


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_each_operation_is_described_as_the_catalogue_says(document: dict[str, Any], op: Operation) -> None:
    described = document["paths"][op.path]["post"]
    assert (described["operationId"], described["x-operation-code"], described["x-auth"]) == (
        op.name,
        op.code,
        op.auth.value,
    )
    schema = described["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
    assert schema["required"] == [*op.required, *(["control"] if op.control else [])]
    assert set(schema["properties"]) == {*op.fields, *(["control"] if op.control else [])}
    if op.control is not None:
        assert schema["properties"]["control"]["description"] == op.control.text
    assert described["security"] == ([] if op.auth is AuthScheme.CONTROL else [{"oauth": []}])
    assert {"200", "400", "500"} <= set(described["responses"])


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_every_described_path_answers_on_the_simulator(server: SimulatorServer, op: Operation) -> None:
    paths = [op.path.format(endpointId="1001")]
    if op.group:
        paths.append(op.group_path.format(endpointGroupId="2001"))
    for path in paths:
        answer = requests.post(server.base_url + path, data=b"", headers={"Accept": MEDIA_TYPE}, timeout=30)
        assert answer.status_code in (400, 401), (path, answer.text)
        assert answer.json()["type"] == "validation-error"
