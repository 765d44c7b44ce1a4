"""gatekit's pytest plugin (the ``pytest11`` entry point ``gatekit``): on in every pytest run once gatekit is installed.

Options: ``--gateway-profile NAME`` (default ``GATEKIT_PROFILE`` or ``simulator``: the embedded
simulator on a free port) and ``--gateway-config FILE`` (profiles TOML; default ``gatekit.toml``).
The fixtures are in ``toolkit.certify.fixtures``; the suite's phrases in ``toolkit.steps``.
Scenarios tagged ``@simulator`` need the control API and are skipped on a sandbox; ``@callbacks``
ones are skipped when the gateway cannot reach this machine; ``@browser`` ones (the real-browser
payer) when ``GATEKIT_BROWSER=off``, or without Selenium or Chromium, each with its reason.
With ``-n`` against a team's simulator (one for every worker), a scenario with a step that moves what
all share (its clock, its fault plans: ``toolkit.certify.shared``) runs alone, the others side by side.

With ``--alluredir`` every scenario is labelled when it is collected (epic = flow, feature =
operation, story = the Gherkin title, the Gherkin text as description: skipped scenarios keep
them too), its Gherkin steps, HTTP exchanges, the payer's pages, polls and callbacks become Allure
steps, and the results are tidied as they are written (``toolkit.certify.tidy``).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import allure
import pytest

from toolkit.certify import naming, parallel, shared, tidy
from toolkit.certify.pytest_compat import stop_rewriting
from toolkit.operations import OPERATIONS

if TYPE_CHECKING:  # the client, the simulator and the reporting are imported where a hook needs them:
    # the xdist controller, which runs no test, then starts without them (and a worker loads them once)
    from toolkit.config import GatewayConfig

pytest_plugins = ["toolkit.certify.fixtures"]

# Gherkin tags in use: flows, kinds of scenario, and every catalogue operation.
FLOW_TAGS = ("threeds", "returns", "tokenization", "payouts", "preauth", "hosted_forms", "cards", "callbacks",
             "signing", "declines", "simulator", "exported", "chargebacks", "refusals", "strict",
             "browser", "gateway_run", "hosted_fields")  # fmt: skip
_OPEN_STEPS = pytest.StashKey[list[Any]]()  # the Allure steps of the scenario's running Gherkin steps


def _leave_the_package_unrewritten() -> None:
    """pytest rewrites the asserts of every module of a plugin's distribution, so each gatekit module
    imported in a pytest run goes through ``ast.parse``. The embedded simulator imports modules in its own
    threads (the app built in the background, lazy imports while answering), and on CPython 3.11
    two threads in ``ast.parse`` at once can fail with ``SystemError: AST constructor recursion depth
    mismatch`` (python/cpython#106905). gatekit's modules assert nothing a test reads, so they are imported
    as they are; test files and conftests (``steps/``, a merchant's own) are still rewritten."""
    stop_rewriting("toolkit")


_leave_the_package_unrewritten()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gatekit", "gatekit: the gateway under test")
    group.addoption(
        "--gateway-profile",
        default=None,
        help="simulator, sandbox or a [profiles.NAME] (default: GATEKIT_PROFILE or simulator)",
    )
    group.addoption("--gateway-config", default=None, help="TOML file with named profiles (default: gatekit.toml)")
    group.addoption(
        "--gateway-record",
        default=None,
        metavar="DIR",
        help="record every scenario's exchanges, payer pages and callbacks as HAR 1.2 in DIR (masked), with "
        "index.json; gatekit drift DIR compares them with the simulator",
    )
    group.addoption(
        "--simulator-lenient",
        action="store_true",
        help="embed a lenient simulator: it forgives what the production gateway refuses (journal warnings)",
    )
    group.addoption(
        parallel.ORDER_OPTION,
        default=None,
        metavar="FILE",
        help="start the scenarios that took longest in earlier runs first (times from and into FILE: gatekit certify "
        "gives reports/durations.json when scenarios run side by side)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from toolkit.certify.scrub import install_allure_scrubber, remember_environment_secrets

    remember_environment_secrets()
    install_allure_scrubber(config)
    for tag in (*FLOW_TAGS, *OPERATIONS):
        config.addinivalue_line("markers", f"{tag}: gatekit scenario tag")
    tidy.install(config)
    durations = config.getoption(parallel.ORDER_OPTION, None)
    if durations and not hasattr(config, "workerinput"):  # (the run's first process sees every report)
        profile = _profile_name(profile_option(config)[0])
        config.pluginmanager.register(parallel.DurationLog(Path(durations), profile), "gatekit-durations")
    folder = config.getoption("--gateway-record", None)
    if folder and not hasattr(config, "workerinput"):  # the run's first process: an earlier run's files go
        from toolkit.recording import clear

        clear(Path(folder))


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Every test report masked (secrets, card data in a traceback's source lines, locals, exception message and
    assertion explanation, or in captured output) before the terminal, JUnit XML and Allure read it (``trylast``:
    inside the other plugins' wrappers); the exception itself too (Allure's message is made from it)."""
    outcome = yield
    from toolkit.certify.scrub import frame_cvvs, remember_cvvs, scrub, scrub_exception

    cvvs = scrub(outcome.get_result(), frame_cvvs(call.excinfo.tb if call.excinfo is not None else None))
    scrub_exception(call.excinfo.value if call.excinfo is not None else None, cvvs)
    remember_cvvs(item.config, cvvs)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A module of scenarios with a misspelled keyword (``Scenaro:``, ``Givn``), a line Gherkin cannot read, a step
    no phrase matches, or a value its phrase does not know, fails to collect with one line per problem
    (``toolkit.certify.check``): nothing runs, pytest exits 2."""
    outcome = yield
    from toolkit.certify.scrub import scrub

    report = outcome.get_result()
    if isinstance(collector, pytest.Module):
        from toolkit.certify.check import refuse

        refuse(report, collector)
    scrub(report)


# (the run's recordings, the scenario's recorder, when it started): set by the ``gateway_recorder`` fixture
RECORDING = pytest.StashKey[tuple[Any, Any, str]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """With ``--gateway-record``: the scenario's HAR written when it ends, and attached to its Allure result
    (here, in the test's own phase: an attachment of a fixture's teardown would go to the fixture)."""
    outcome = yield
    recording = item.stash.get(RECORDING, None)
    if recording is None:
        return
    from toolkit.certify import naming

    run, recorder, started = recording
    failed = outcome.excinfo is not None
    skipped = failed and outcome.excinfo[0].__name__ in ("Skipped", "XFailed")
    result = "skipped" if skipped else "failed" if failed else "passed"
    name = naming.title(item) if naming.template_of(item) is not None else item.name
    path = run.add(name, recorder, nodeid=item.nodeid, outcome=result, started=started,
                   tags=sorted(naming.tags(item)))  # fmt: skip
    if getattr(item.config.option, "allure_report_dir", None):
        attach: Any = allure.attach  # (untyped)
        attach.file(str(path), name="recording (HAR 1.2, masked)", extension="har")


def profile_option(config: pytest.Config) -> tuple[str | None, Path | None]:
    """``--gateway-profile`` (None: ``GATEKIT_PROFILE`` or ``simulator``) and ``--gateway-config``."""
    file = config.getoption("--gateway-config")
    return config.getoption("--gateway-profile"), Path(file) if file else None


def _profile_name(name: str | None) -> str:
    """The profile's name as the durations file keeps it (a profile that cannot be used is said elsewhere)."""
    return name or os.environ.get("GATEKIT_PROFILE") or "simulator"


def load_profile(config: pytest.Config) -> GatewayConfig:
    """The chosen profile; a profile that cannot be used stops the run with one line, not a traceback."""
    from toolkit.config import ConfigError, load_config

    name, file = profile_option(config)
    try:
        return load_config(name, file=file)
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None


def needs_gateway(item: pytest.Item) -> bool:
    """A scenario, or a test that uses the gateway's fixtures."""
    return naming.template_of(item) is not None or "gateway_target" in getattr(item, "fixturenames", ())


def usable_profile(config: pytest.Config) -> GatewayConfig | None:
    """The profile; one that cannot be used is one line before any test runs, not a traceback per test.  In an
    xdist worker (which cannot stop the run) each test that needs the gateway fails with that line instead."""
    try:
        return load_profile(config)
    except pytest.UsageError as error:
        if not hasattr(config, "workerinput"):
            raise
        config.stash[_PROFILE_ERROR] = str(error)
        return None


_PROFILE_ERROR = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """(an xdist worker whose profile cannot be used: the test fails with that one line, before its fixtures)"""
    error = item.config.stash.get(_PROFILE_ERROR, None)
    if error is not None and needs_gateway(item):
        pytest.fail(error, pytrace=False)


_RUN_LOCK = pytest.StashKey[Path]()  # (the xdist controller: the folder of the run's lock, when workers share)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(the xdist controller, for each worker) A team's simulator is one for every worker: they get the folder of
    the run's lock (``toolkit.certify.shared``), so that a scenario that moves its clock or faults runs alone."""
    config = node.config
    if _RUN_LOCK not in config.stash:
        from toolkit.certify.target import outside_simulator

        try:
            outside = outside_simulator(load_profile(config))
        except pytest.UsageError:  # (said in one line elsewhere)
            outside = False
        if not outside:
            return
        import tempfile

        config.stash[_RUN_LOCK] = Path(tempfile.mkdtemp(prefix="gatekit-run-lock-"))
    node.workerinput[shared.WORKER_INPUT] = str(config.stash[_RUN_LOCK])


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_RUN_LOCK, None)
    if folder is not None:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def _run_lock(config: pytest.Config) -> shared.RunLock | None:
    """The run's lock, in a worker beside others on one simulator; None elsewhere."""
    folder = getattr(config, "workerinput", {}).get(shared.WORKER_INPUT)
    return shared.RunLock(Path(folder)) if folder else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """A scenario that moves the shared simulator's clock or faults runs alone; the others share the run's lock."""
    lock = _run_lock(item.config)
    if lock is None:
        yield
        return
    with lock.hold(alone=shared.ALONE in item.stash):
        yield


def pytest_sessionstart(session: pytest.Session) -> None:  # (the xdist controller: it collects nothing)
    """With ``-n``, a profile named on the command line or in ``GATEKIT_PROFILE`` is checked before the workers
    start: one line, exit 4."""
    config = session.config
    if config.pluginmanager.has_plugin("dsession") and (
        config.getoption("--gateway-profile") or os.environ.get("GATEKIT_PROFILE")
    ):
        load_profile(config)
    _write_environment(session)


def no_browser_reason() -> str | None:
    """Why the real-browser payer cannot run here, or None when it can."""
    if os.environ.get("GATEKIT_BROWSER") == "off":
        return "GATEKIT_BROWSER=off: the real-browser payer is switched off"
    if importlib.util.find_spec("selenium") is None:
        return "needs the real-browser payer: pip install 'gatekit[browser]' (or GATEKIT_BROWSER=off)"
    from toolkit.payer.browser import BrowserUnavailable, find_browser

    try:
        find_browser()
    except BrowserUnavailable as error:
        return f"{error} (or GATEKIT_BROWSER=off)"
    return None


def label(item: pytest.Item) -> None:
    """Allure labels and description of a scenario, from its Gherkin: on the item, so a skipped one keeps them.
    A scenario tagged with no operation (a merchant's own, as a rule) is grouped under its flow's name again."""
    text = naming.gherkin(item)
    if text is None:
        return
    labels = {"epic": naming.flow(item), "feature": naming.operation(naming.tags(item)) or naming.flow(item)}
    for kind, value in {**labels, "story": naming.title(item)}.items():
        item.add_marker(pytest.mark.allure_label(value, label_type=kind))
    item.add_marker(pytest.mark.allure_description(f"```gherkin\n{text}\n```"))


def skip_browser_scenarios(items: list[pytest.Item]) -> None:
    """``@browser`` scenarios are skipped, with the reason, where the real-browser payer cannot run."""
    browser_items = [item for item in items if item.get_closest_marker("browser")]
    if browser_items and (reason := no_browser_reason()):
        for item in browser_items:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if getattr(config.option, "allure_report_dir", None):
        for item in items:
            label(item)
        tidy.remember_identities(config, items)
    base = usable_profile(config) if any(map(needs_gateway, items)) else None
    durations = config.getoption(parallel.ORDER_OPTION, None)
    if durations:
        earlier = parallel.read_durations(Path(durations), _profile_name(profile_option(config)[0]))
        parallel.longest_first(items, earlier)
    skip_browser_scenarios(items)
    if _run_lock(config) is not None:
        for item in items:
            reason = shared.alone_reason(item) if naming.template_of(item) is not None else None
            if reason:
                item.stash[shared.ALONE] = reason
    if config.getoption("--simulator-lenient"):
        reason = "the lenient simulator forgives this on purpose; the scenario needs the gateway's strict checks"
        for item in items:
            if item.get_closest_marker("strict"):
                item.add_marker(pytest.mark.skip(reason=reason))
    marked = any(item.get_closest_marker("simulator") or item.get_closest_marker("callbacks") for item in items)
    if base is None or not marked:  # (None: no scenario here, or an unusable profile that fails every test)
        return
    from toolkit.certify.target import has_control_api, no_callbacks_reason

    no_callbacks = no_callbacks_reason(base)
    for item in items:
        if item.get_closest_marker("simulator") and not has_control_api(base):
            reason = f"needs the simulator's control API; profile {base.profile} is a sandbox"
            item.add_marker(pytest.mark.skip(reason=reason))
        if item.get_closest_marker("callbacks") and no_callbacks:
            item.add_marker(pytest.mark.skip(reason=no_callbacks))


def _write_environment(session: pytest.Session) -> None:
    results = getattr(session.config.option, "allure_report_dir", None)
    if results:
        from toolkit.certify import reporting
        from toolkit.certify.target import embeds_simulator, target_note

        config = load_profile(session.config)
        name, file = profile_option(session.config)
        reporting.write_environment(Path(results), {
            "profile": config.profile,
            "base_url": "embedded simulator on a free loopback port" if embeds_simulator(config) else config.base_url,
            "endpoint_id": config.endpoint_id or "",
            "endpoint_group_id": config.endpoint_group_id or "",
            "gateway": target_note(name, config_file=file),
        })  # fmt: skip


# --- pytest-bdd -> Allure ------------------------------------------------------------------------


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """A scenario's Allure name is its Gherkin title (a skipped one's too: teardown runs for it as well)."""
    if naming.template_of(item) is not None and getattr(item.config.option, "allure_report_dir", None):
        dynamic: Any = allure.dynamic  # untyped
        dynamic.title(naming.title(item))


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    from toolkit.certify import reporting

    reporting.begin_scenario()


def pytest_bdd_after_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    from toolkit.certify import reporting

    reporting.end_scenario()


def pytest_bdd_before_step(
    request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any, step_func: Any
) -> None:
    context: Any = allure.step(f"{step.keyword} {step.name}")
    context.__enter__()
    request.node.stash.setdefault(_OPEN_STEPS, []).append(context)


def _close_step(request: pytest.FixtureRequest, exc: BaseException | None) -> None:
    stack = request.node.stash.get(_OPEN_STEPS, [])
    if stack:
        stack.pop().__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)


def pytest_bdd_after_step(request: pytest.FixtureRequest, *args: Any) -> None:
    _close_step(request, None)


def pytest_bdd_step_error(request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any, step_func: Any,
                          step_func_args: Any, exception: Exception) -> None:  # fmt: skip
    _close_step(request, exception)
