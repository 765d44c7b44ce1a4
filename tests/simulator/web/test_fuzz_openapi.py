"""The standing fuzz suite (issue 9): schemathesis over the simulator's OpenAPI document, signed.

Every operation of ``/paynet/openapi.json``, by endpoint and by group, gets generated requests;
``tests/fuzz_signing.py`` addresses most of them to the demo merchant, with real order ids and a
correct ``control`` or OAuth signature, so they reach the engine and not only the checks.  Every
answer must be documented, in the documented content type, and never a server error.

``make test`` runs ``GATEKIT_FUZZ_EXAMPLES`` (default 12) generated examples per operation; ``make fuzz`` runs
enough for 20,000 requests and prints the count, and adds schemathesis's coverage phase
(``GATEKIT_FUZZ_COVERAGE=on``): about 140 boundary cases per operation (each required field left out, each
type and format broken), built at collection, which would cost ``make test`` 25 s of CPU.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.fuzz_signing import OrderPool, sign_case
from toolkit.client import GatewayClient
from toolkit.simulator import SimulatorServer
from toolkit.simulator.web.openapi import openapi_document

EXAMPLES = int(os.environ.get("GATEKIT_FUZZ_EXAMPLES", "12"))
COVERAGE = os.environ.get("GATEKIT_FUZZ_COVERAGE", "off") == "on"
SCHEMA = schemathesis.openapi.from_dict(openapi_document("http://127.0.0.1/paynet"))
SCHEMA.config.phases.coverage.enabled = COVERAGE
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
TALLY = {"requests": 0, "signed": 0}


@pytest.fixture(scope="module")
def pool(client: GatewayClient) -> OrderPool:
    return OrderPool.create(client)


@pytest.fixture(scope="module", autouse=True)
def tally(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    if reporter is not None and TALLY["requests"]:
        reporter.write_line(
            f"fuzz: {TALLY['requests']} requests ({TALLY['signed']} signed), 0 server errors, "
            f"{EXAMPLES} examples per operation" + (", and the coverage phase" if COVERAGE else "")
        )


@SCHEMA.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_get_documented_answers_never_a_server_error(
    case: schemathesis.Case, server: SimulatorServer, pool: OrderPool
) -> None:
    signed = sign_case(
        case.operation.definition.raw["operationId"], case.path_parameters or {}, case.body, server.base_url, pool
    )
    case.path_parameters = signed.path_parameters
    case.body = signed.body
    case.headers = {**(case.headers or {}), **signed.headers}
    response = case.call(base_url=server.base_url, timeout=30)
    TALLY["requests"] += 1
    TALLY["signed"] += "Authorization" in signed.headers or (isinstance(signed.body, dict) and "control" in signed.body)
    case.validate_response(response, checks=CHECKS)
