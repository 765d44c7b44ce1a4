"""The Allure results as people read them: tidied on their way to ``allure-results/``.

allure-pytest has no options for what the certification report needs, so the results pass through
hook wrappers of ``allure_commons`` (``report_result``, ``report_container``) before its file logger
writes them:

- an outline's example shows as its columns (``outcome = expired``), not as a Python dict;
- Failed means the gateway behaved otherwise than the scenario expects: an assertion, and the
  toolkit's errors about the gateway's answers (a refusal, a decline, a page without the expected
  form, no outcome in time).  Broken is left for what the test itself got wrong (a step not
  found, a ``TypeError``) and for no answer at all (``TransportError``: the gateway is unreachable);
- a scenario's identity (``fullName``, ``testCaseId``, ``historyId``, the suite and package labels) is
  made from its feature's path inside its suite and its title (``naming.Identity``), not from pytest's
  node id, which holds the install path of gatekit's own flows (``.venv/lib/python3.11/site-packages/...``);
- fixture set-up and tear-down entries are dropped unless they failed or carry steps or
  attachments: a passing scenario shows its Gherkin steps, not two dozen fixture lines.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Generator, Iterable
from typing import Any

import allure_commons
import pytest
from allure_commons.model2 import Label, Parameter
from allure_commons.utils import md5 as _allure_md5

from toolkit.certify.naming import EXAMPLE_PARAM, Identity

_KEPT_STATUSES = ("failed", "broken")


def failure_classes() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """The errors that say the gateway answered otherwise than the scenario expects (a failure, like an
    assertion), and those among them that are not failures (no answer: the run is broken, not failed).

    Imported when a result is tidied, not when the plugin loads (the xdist controller never needs them).
    """
    from toolkit.callbacks.inbox import CallbackTimeout
    from toolkit.errors import GatewayError, TransportError
    from toolkit.flows import FlowError
    from toolkit.payer import PayerError

    return (GatewayError, FlowError, PayerError, CallbackTimeout), (TransportError,)


def exception_class(message: str | None) -> type[BaseException] | None:
    """The exception class named at the head of an Allure message (``toolkit.flows.FlowError: ...``)."""
    head = (message or "").split(":", 1)[0].strip()
    module, _, name = head.rpartition(".")
    found = getattr(sys.modules.get(module or "builtins"), name, None) if name.isidentifier() else None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def is_gateway_failure(message: str | None) -> bool:
    cls = exception_class(message)
    if cls is None:
        return False
    failures, not_failures = failure_classes()
    return issubclass(cls, failures) and not issubclass(cls, not_failures)


def _fix_status(item: Any) -> None:
    """Broken -> failed, for this item and its steps, where a gateway failure is the cause."""
    details = item.statusDetails
    if item.status == "broken" and details is not None and is_gateway_failure(details.message):
        item.status = "failed"
    for step in item.steps or ():
        _fix_status(step)


def _example_parameters(parameters: Iterable[Any]) -> list[Any]:
    """pytest-bdd's ``_pytest_bdd_example`` parameter -> one parameter per column of the example."""
    shown: list[Any] = []
    for parameter in parameters:
        if parameter.name != EXAMPLE_PARAM:
            shown.append(parameter)
            continue
        try:
            example = ast.literal_eval(parameter.value)
        except (ValueError, SyntaxError):
            example = None
        if isinstance(example, dict):
            shown += [Parameter(name=str(name), value=str(value)) for name, value in example.items()]
        else:
            shown.append(parameter)
    return shown


def _is_noise(fixture: Any) -> bool:
    """A set-up or tear-down entry that says nothing: passed (or never finished), no steps, no attachments."""
    return fixture.status not in _KEPT_STATUSES and not fixture.steps and not fixture.attachments


_SUITE_LABELS = ("parentSuite", "suite", "subSuite", "package")
md5: Callable[..., str] = _allure_md5  # how allure-commons makes its ids (untyped there)


def apply_identity(result: Any, identity: Identity) -> None:
    """The result named by its identity: the same scenario keeps its history wherever gatekit is installed."""
    result.fullName = identity.full_name
    result.testCaseId = md5(identity.full_name)
    shown = sorted((p for p in result.parameters if not getattr(p, "excluded", False)), key=lambda p: p.name)
    result.historyId = md5(identity.full_name, *(f"{p.name}={p.value}" for p in shown))
    result.titlePath = [identity.suite, *identity.path.split("/")]
    result.labels = [label for label in result.labels if label.name not in _SUITE_LABELS]
    result.labels += [Label(name="parentSuite", value=identity.suite), Label(name="suite", value=identity.folder),
                      Label(name="subSuite", value=identity.path.rsplit("/", 1)[-1]),
                      Label(name="package", value=identity.package)]  # fmt: skip


class ResultTidier:
    """Hook wrappers of ``allure_commons``: they change a result or a container just before it is written."""

    def __init__(self) -> None:
        self.identities: dict[str, Identity] = {}  # allure-pytest's fullName (from the node id) -> the identity

    def remember(self, item: pytest.Item, identity: Identity) -> None:
        from allure_pytest.utils import allure_full_name

        self.identities[allure_full_name(item)] = identity

    @allure_commons.hookimpl(hookwrapper=True)
    def report_result(self, result: Any) -> Generator[None, None, None]:
        _fix_status(result)
        result.parameters = _example_parameters(result.parameters)
        identity = self.identities.get(result.fullName)
        if identity is not None:
            apply_identity(result, identity)
        yield

    @allure_commons.hookimpl(hookwrapper=True)
    def report_container(self, container: Any) -> Generator[None, None, None]:
        container.befores = [fixture for fixture in container.befores if not _is_noise(fixture)]
        container.afters = [fixture for fixture in container.afters if not _is_noise(fixture)]
        yield


def install(config: pytest.Config) -> None:
    """Tidy the results of this run (when allure-pytest writes any: ``--alluredir``)."""
    if not getattr(config.option, "allure_report_dir", None):
        return
    tidier = ResultTidier()
    config.stash[TIDIER] = tidier
    allure_commons.plugin_manager.register(tidier)
    config.add_cleanup(lambda: allure_commons.plugin_manager.unregister(tidier))


TIDIER = pytest.StashKey[ResultTidier]()


def remember_identities(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each scenario's identity, for its result (``--alluredir``); the merchant's folders are pytest's folder
    arguments (``gatekit certify`` passes its own and the merchant's)."""
    from toolkit.certify.naming import identity

    tidier = config.stash.get(TIDIER, None)
    if tidier is None:
        return
    here = config.invocation_params.dir
    roots = [here / arg for arg in config.args if (here / arg).is_dir()]
    for item in items:
        found = identity(item, roots)
        if found is not None:
            tidier.remember(item, found)
