"""``gatekit certify``: run the suite against a profile, write Allure results, JUnit XML and an HTML report.

What runs: gatekit's own flows (``toolkit.suite``, shipped in the wheel) and the merchant's
feature files (``--suite DIR``, or ``./features`` when present), all with gatekit's steps
(``toolkit.steps``) and the merchant's ``conftest.py``.  The run is a separate pytest process in
the current directory, which is the rootdir; the directory's own pytest configuration applies
when it has one. Everything that can be refused is refused before pytest starts: the profile, the suite
(with a misspelled Gherkin keyword, or a line Gherkin cannot read: ``toolkit.certify.keywords``), the tags.
It says what it does while it works: a line before pytest starts, one when the scenarios are collected
(``toolkit.certify.progress``), one while the HTML report is made. The HTML report is made by Allure 3
(``npx allure generate``: ``allure`` from ``./node_modules`` or the PATH) with the directory's
``allurerc.mjs``, or gatekit's own (``toolkit/certify/allurerc.mjs``: gatekit's failure categories, the
history of earlier runs in ``reports/history.jsonl`` for trends, one file per suite selection:
``history_name``), then the Google Analytics Allure writes into it is taken out
(``toolkit.certify.offline``); without Allure the results and JUnit XML are still written.
After the run the JUnit test cases are named by their Gherkin titles and ``reports/summary.md``
(the verdict per flow, the failures, links) is written for a CI job to post.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolkit import suite
from toolkit._version import ALLURE_VERSION
from toolkit.certify import catalog, keywords, offline, parallel, summary
from toolkit.certify.options import CertifyOptions as CertifyOptions  # (re-exported: where it always was)
from toolkit.certify.staging import StagedRun
from toolkit.certify.target import target_note
from toolkit.config import load_config

BUNDLED_INI = Path(__file__).with_name("certify.ini")
BUNDLED_ALLURERC = Path(__file__).with_name("allurerc.mjs")
ALLURE_CONFIGS = ("allurerc.mjs", "allurerc.js", "allurerc.cjs", "allurerc.json", "allurerc.yaml", "allurerc.yml")
SUITE_PLUGINS = ("toolkit.certify.collect", "toolkit.steps")  # feature files as tests, and gatekit's phrases
PLUGINS = ("toolkit.certify.progress", *SUITE_PLUGINS)
CHECK_PLUGIN = "toolkit.certify.checkrun"  # gatekit certify --check: instead of progress
EXIT_PASSED, EXIT_FAILED, EXIT_NOT_RUN = 0, 1, 2
# pytest plugins that gatekit's own flows never use but that load at every pytest start when installed
# (schemathesis and hypothesis come with gatekit's `test` extra: about 1.3 s of CPU in each process, which
# made `-n 2` slower than serial; anyio, Faker's, Locust's and platformdirs' with gatekit's dependencies: 0.2 s
# more in each of a sandbox run's workers).  Blocked only when no merchant feature folder runs: theirs may use them.
UNUSED_BY_THE_SUITE = ("schemathesis", "hypothesispytest", "anyio", "faker", "locust", "platformdirs",
                       "xdist.looponfail")  # fmt: skip


class SuiteError(ValueError):
    """A suite that cannot be run as asked (no such folder, no feature files)."""


class FeatureError(SuiteError):
    """Feature files with a misspelled keyword or a line Gherkin cannot read (``toolkit.certify.keywords``)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n  ".join(["feature files that cannot run (nothing ran):", *lines]))


def own_features(options: CertifyOptions, cwd: Path) -> Path | None:
    """The merchant's feature folder: ``--suite``, ``GATEKIT_SUITE``, or ``./features`` unless it is gatekit's own."""
    named = os.environ.get("GATEKIT_SUITE", "").strip()
    if options.suite is None and named:
        options = replace(options, suite=Path(named).expanduser())
    if options.suite is not None:
        if not options.suite.is_dir():
            raise SuiteError(f"--suite {options.suite}: no such directory")
        if not any(options.suite.rglob("*.feature")):
            raise SuiteError(f"--suite {options.suite}: no .feature files in it")
        return options.suite
    local = cwd / "features"
    if not local.is_dir() or local.resolve() == suite.features_dir().resolve():
        return None
    return local


def suite_folders(options: CertifyOptions, cwd: Path) -> list[Path]:
    own = own_features(options, cwd)
    if options.suite_only and own is None:
        raise SuiteError("--suite-only: give --suite DIR, the folder of your own feature files")
    return ([] if options.suite_only else [suite.features_dir()]) + ([own] if own else [])


def history_name(options: CertifyOptions, folders: list[Path], cwd: Path) -> str:
    """The Allure history file of this suite selection: ``history.jsonl`` for gatekit's own flows, another
    for a selection of other scenarios (``--suite-only``, the merchant's folder beside gatekit's, ``--tags``),
    so that a trend compares runs of the same scenarios."""
    parts = []
    for folder in folders:
        if folder.resolve() == suite.features_dir().resolve():
            parts.append("gatekit")
        else:
            resolved = folder.resolve()
            parts.append(resolved.relative_to(cwd.resolve()).as_posix() if resolved.is_relative_to(cwd.resolve())
                         else resolved.name)  # fmt: skip
    if options.tags:
        parts.append(f"tags {options.tags}")
    if parts == ["gatekit"]:
        return "history.jsonl"
    key = "+".join(parts)
    slug = re.sub(r"[^A-Za-z0-9+]+", "-", key).strip("-")
    if len(slug) > 60 or slug != key:
        slug = f"{slug[:48]}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"
    return f"history.{slug}.jsonl"


def _has_pytest_section(path: Path) -> bool:
    if path.name in ("pytest.ini", ".pytest.ini"):
        return True
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.name == "pyproject.toml":
        return "pytest" in tomllib.loads(text).get("tool", {})
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser.has_section("pytest" if path.name == "tox.ini" else "tool:pytest")


def pytest_config_file(cwd: Path) -> Path | None:
    """The pytest configuration pytest itself would use from ``cwd`` (searched upwards), if any."""
    names = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
    for folder in (cwd, *cwd.parents):
        for name in names:
            if (folder / name).is_file() and _has_pytest_section(folder / name):
                return folder / name
    return None


def pytest_args(options: CertifyOptions, folders: list[Path], cwd: Path, *, check_only: bool = False) -> list[str]:
    """pytest's arguments for the run (``check_only``: collect, check the feature files and report on them)."""
    ini = pytest_config_file(cwd)
    args = [*map(str, folders), "-c", str(ini or BUNDLED_INI), f"--rootdir={ini.parent if ini else cwd}",
            f"--confcutdir={ini.parent if ini else cwd}", "-p", "no:terminal", "-p", "no:cacheprovider",
            # allure-pytest-bdd, when a merchant's environment has it, registers --alluredir beside allure-pytest
            "-p", "no:allure_pytest_bdd"]  # fmt: skip
    if check_only:
        args += ["--collect-only", "-p", CHECK_PLUGIN, *(["-m", options.tags] if options.tags else [])]
        args += [f"--gateway-profile={options.profile}"] if options.profile else []
        return args + ([f"--gateway-config={options.config_file}"] if options.config_file else [])
    args += [f"--alluredir={options.results}", f"--junitxml={options.reports / 'junit.xml'}"]
    for plugin in PLUGINS:
        args += ["-p", plugin]
    if all(folder.resolve() == suite.features_dir().resolve() for folder in folders):
        for plugin in UNUSED_BY_THE_SUITE:
            args += ["-p", f"no:{plugin}"]
    if options.profile:
        args.append(f"--gateway-profile={options.profile}")
    if options.config_file:
        args.append(f"--gateway-config={options.config_file}")
    if options.tags:
        args += ["-m", options.tags]
    if options.workers > 1:  # (toolkit.certify.parallel: scenarios side by side, the longest first)
        args += ["-n", str(options.workers), f"{parallel.ORDER_OPTION}={options.reports / parallel.DURATIONS}"]
        args += [] if options.embedded else ["--dist", "load"]
    if options.lenient:
        args.append("--simulator-lenient")
    if options.record:
        args.append(f"--gateway-record={options.record.resolve()}")
    return args


def allure_command(cwd: Path) -> list[str] | None:
    """Allure 3: ``./node_modules/.bin/allure``, ``allure`` on the PATH, else ``npx`` (Node.js), which fetches the
    pinned version from npm the first time; None without any of them."""
    local = cwd / "node_modules" / ".bin" / "allure"
    if local.exists():
        return [str(local)]
    found = shutil.which("allure")
    if found:
        return [found]
    npx = shutil.which("npx")
    return [npx, "--yes", f"allure@{ALLURE_VERSION}"] if npx else None


def allure_config(cwd: Path) -> Path:
    """The directory's own Allure configuration, or gatekit's."""
    return next((cwd / name for name in ALLURE_CONFIGS if (cwd / name).is_file()), BUNDLED_ALLURERC)


def make_html(options: CertifyOptions, cwd: Path) -> tuple[str, Path | None]:
    """The line to print about the HTML report, and its ``index.html`` when it was made."""
    command = allure_command(cwd)
    if command is None:
        return (
            f"HTML report: not made (Allure 3 needs Node.js: install it for npx, or npm install "
            f"allure@{ALLURE_VERSION} here, or put allure on the PATH)"
        ), None
    target = options.reports / "allure-report"
    env = {**os.environ, "GATEKIT_ALLURE_RESULTS": str(options.results), "GATEKIT_REPORTS": str(options.reports),
           "GATEKIT_HISTORY": str(options.reports / options.history), **offline.NO_ANALYTICS_ENV}  # fmt: skip
    argv = [*command, "generate", str(options.results), "-o", str(target), "--config", str(allure_config(cwd))]
    result = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd, env=env)
    if result.returncode != 0:
        return f"HTML report: allure generate failed: {(result.stderr or result.stdout).strip()[:500]}", None
    offline.strip_analytics(target)  # (Allure writes Google Analytics into the report: it opens offline)
    index = (target / "index.html").resolve()
    return f"HTML report: {index}", index


def feature_problems(folders: list[Path], cwd: Path) -> list[str]:
    """A line for each misspelled keyword, or line Gherkin cannot read, in the feature files of ``folders``."""
    lines = []
    for folder in folders:
        gatekits = folder.resolve() == suite.features_dir().resolve()
        for path in sorted(folder.rglob("*.feature")):
            inside = path.relative_to(folder).as_posix()
            lines += keywords.problems_in(path, f"gatekit's {inside}" if gatekits else _shown(path, cwd))
    return lines


def _shown(path: Path, cwd: Path) -> str:
    resolved = path.resolve()
    return resolved.relative_to(cwd.resolve()).as_posix() if resolved.is_relative_to(cwd.resolve()) else str(path)


def read_suite(options: CertifyOptions, cwd: Path) -> tuple[list[Path], list[catalog.Entry]]:
    """The folders to run and every scenario in them; SuiteError (a FeatureError for what Gherkin would not read as
    written: ``Scenaro:``, ``Givn``) when they cannot run."""
    folders = suite_folders(options, cwd)
    problems = feature_problems(folders, cwd)
    if problems:
        raise FeatureError(problems)
    return folders, catalog.read(folders)


def prepare(options: CertifyOptions, cwd: Path) -> tuple[list[Path], list[catalog.Entry]]:
    """The folders to run and the scenarios selected; SuiteError, SelectionError or ConfigError if it cannot run."""
    load_config(options.profile, file=options.config_file)  # a profile that cannot be used stops here
    target_note(options.profile, config_file=options.config_file)  # and so do its embedded simulator's settings
    folders, entries = read_suite(options, cwd)
    selected = catalog.select(entries, options.tags)
    if not selected and options.tags:
        raise catalog.SelectionError(f"--tags {options.tags!r} selects no scenario")
    if not selected:
        raise SuiteError(f"no scenario in {', '.join(_shown(folder, cwd) for folder in folders)}")
    return folders, selected


def check(options: CertifyOptions, cwd: Path | None = None) -> int:
    """``gatekit certify --check``: the feature files collected and checked, nothing run; 0 when every step has a
    phrase and every value is known, 2 otherwise (one line per problem, printed by ``toolkit.certify.checkrun``)."""
    cwd = cwd or Path.cwd()
    try:
        folders, _ = prepare(options, cwd)
    except FeatureError as error:  # (said as the check says what it finds)
        count = len(error.lines)
        print("\n".join([*error.lines, f"gatekit certify --check: {count} problem{'s' * (count != 1)}; nothing ran"]))
        return EXIT_NOT_RUN
    args = pytest_args(options, folders, cwd, check_only=True)
    args += [arg for plugin in SUITE_PLUGINS for arg in ("-p", plugin)]
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, check=False)
    return EXIT_PASSED if done.returncode in (0, 5) else EXIT_NOT_RUN


class Interrupted(Exception):
    """Ctrl-C or SIGTERM during the run: pytest and what it started were stopped, nothing of the run was kept."""


def certify(options: CertifyOptions, cwd: Path | None = None) -> int:
    """Run the suite; 0 when every flow passed, 1 when any failed, 2 when it could not run.

    The run writes aside (``StagedRun``) and its files replace the previous run's together once it is over;
    Ctrl-C or SIGTERM stops pytest, its workers and its browsers, keeps the previous files, and raises
    ``Interrupted``."""
    cwd = cwd or Path.cwd()
    folders, selected = prepare(options, cwd)
    options = replace(options, history=history_name(options, folders, cwd), **side_by_side(options, selected))
    print(starting_line(options, selected), flush=True)
    staged = StagedRun(options)
    try:
        code, seconds = _run_pytest(staged.options, folders, cwd)
        if staged.options.record is not None and staged.options.record.is_dir():
            from toolkit.recording.run import join_parts

            join_parts(staged.options.record)  # (the workers' parts of the index: one index.json, as serially)
        index = _reports(staged, seconds, cwd)
    except BaseException:
        staged.discard()
        raise
    staged.commit()
    junit = options.reports / "junit.xml"
    print(f"\nAllure results: {options.results.resolve()}\nJUnit XML: {junit.resolve()}")
    if options.record:
        print(f"Recordings (HAR 1.2): {options.record.resolve()} (gatekit drift {options.record})")
    if index is not None:
        print(f"HTML report: {index.resolve()}")
    if (options.reports / summary.FILE).is_file():
        print(f"Summary (Markdown, for CI): {(options.reports / summary.FILE).resolve()}")
    sys.stdout.flush()
    return {0: EXIT_PASSED, 1: EXIT_FAILED}.get(code, EXIT_NOT_RUN)


def _run_pytest(options: CertifyOptions, folders: list[Path], cwd: Path) -> tuple[int, float]:
    """pytest in a separate interpreter (the suite imports toolkit itself: assertion rewriting, fresh state), in
    a process group of its own, so that an interruption reaches it, its workers and its browsers together."""
    command = [sys.executable, "-m", "pytest", *pytest_args(options, folders, cwd)]
    started = time.monotonic()
    with _signals_interrupt(), _callback_front(options) as env:
        process = subprocess.Popen(command, cwd=cwd, start_new_session=True, preexec_fn=signals_at_default, env=env)
        try:
            code = process.wait()
        except KeyboardInterrupt:
            stop_group(process)
            raise Interrupted from None
        finally:
            _end_group(process.pid)  # (what the run left behind: a browser whose teardown did not run)
    return code, time.monotonic() - started


@contextmanager
def _callback_front(options: CertifyOptions) -> Iterator[dict[str, str] | None]:
    """Scenarios side by side against a gateway that calls back through the profile's public ``callback_url``:
    the forwarded port (``GATEKIT_CALLBACK_PORT``) is the run's ``CallbackFront``, and each worker's receiver is
    reached through it (``toolkit.callbacks.front``).  Yields pytest's environment (None: this process's)."""
    if options.workers <= 1 or options.embedded:
        yield None
        return
    config = load_config(options.profile, file=options.config_file)
    if not config.callback_url or config.simulator:  # (a simulator on this machine calls each receiver itself)
        yield None
        return
    import tempfile

    from toolkit.callbacks.front import ROUTES_ENV, CallbackFront

    with tempfile.TemporaryDirectory(prefix="gatekit-callback-routes-") as routes:
        port = int(os.environ.get("GATEKIT_CALLBACK_PORT", "0"))
        with CallbackFront(Path(routes), port=port):
            yield {**os.environ, ROUTES_ENV: routes}


def _reports(staged: StagedRun, seconds: float, cwd: Path) -> Path | None:
    """JUnit names, the HTML report and the summary, written in the staging folders; the report's final path."""
    options = staged.options
    junit = options.reports / "junit.xml"
    index = None
    if junit.is_file():
        summary.name_test_cases(junit)
    if options.html:
        index = _timed_html(options, cwd)
    final_index = staged.final_path(index) if index is not None else None
    if junit.is_file():
        profile = load_config(options.profile, file=options.config_file).profile
        note = target_note(options.profile, config_file=options.config_file)
        summary.write_markdown(junit, profile=profile, seconds=seconds, report=index, note=note)
    return final_index


def side_by_side(options: CertifyOptions, selected: list[catalog.Entry]) -> dict[str, Any]:
    """How many scenarios run at once (``toolkit.certify.parallel``), and whether the run embeds the simulator."""
    from toolkit.certify.target import embeds_simulator

    config = load_config(options.profile, file=options.config_file)
    embedded = embeds_simulator(config)
    workers = parallel.in_flight(config, options.workers, embedded=embedded, scenarios=len(selected))
    return {"workers": workers if workers > 1 else 0, "embedded": embedded}


def starting_line(options: CertifyOptions, selected: list[catalog.Entry]) -> str:
    """The run's first line, printed before pytest starts (its start and the collection take seconds)."""
    profile = load_config(options.profile, file=options.config_file).profile
    flows = len({entry.flow for entry in selected})
    count = f"{len(selected)} scenario{'s' * (len(selected) != 1)} of {flows} flow{'s' * (flows != 1)}"
    return f"gatekit certify: {count}, profile {profile}; starting pytest and collecting them…"


def _timed_html(options: CertifyOptions, cwd: Path) -> Path | None:
    """The HTML report, said while it is made (Allure takes 7 to 30 s) and how long it took."""
    print("\nmaking the HTML report (Allure)…", flush=True)
    started = time.monotonic()
    line, index = make_html(options, cwd)
    took = time.monotonic() - started
    print(f"HTML report made in {took:.1f} s" if index is not None else f"{line} ({took:.1f} s)", flush=True)
    return index


def signals_at_default() -> None:
    """In the child, before pytest starts: Ctrl-C and SIGTERM handled and not blocked, whatever this process
    inherited (a SIGINT ignored by the process that started certify would make pytest ignore the SIGINT that
    ``stop_group`` sends, and wait out ``GRACE``)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # (Python then raises KeyboardInterrupt on it)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


GRACE = 15.0  # seconds pytest has to tear down (close browsers, write what it writes) after Ctrl-C
TERM_GRACE = 3.0


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to pytest's process group; after ``GRACE`` seconds SIGTERM, then SIGKILL: nothing outlives it."""
    for sig, grace in ((signal.SIGINT, GRACE), (signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, TERM_GRACE)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _end_group(pgid: int) -> None:
    """Whatever is left in pytest's process group once pytest has ended: SIGTERM, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + TERM_GRACE
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt too while the run goes on (only the main thread can install it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
