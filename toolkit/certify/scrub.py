"""What pytest reports, with secrets and card data masked: the traceback of a failure (its source lines, the
exception's message and pytest's explanation of an assertion, the locals that ``-l`` shows and the arguments
pytest shows with each frame), and the captured output, before the terminal, JUnit XML and Allure read them.

A report keeps its shape: each piece of pytest's representation of a failure (``ExceptionChainRepr`` and the
entries, locals and locations in it) is masked where it is, so the terminal, the short summary and JUnit's
``message`` still show the exception's line, not the report's first line.  A CVV typed into a test shows in
the report with its name (``cvv2 = "987"``) and without it (``assert '987' == '123'``): the values found with
their name are hidden wherever the same report shows them again (``toolkit.masking.cvvs_in``).  Allure's status
details (of a test, its steps and its fixtures, made from the exception and its traceback) are masked as the
results are written (``AllureScrubber``).

Secrets are ``Secret`` values from the moment they are read (``toolkit.config``); this is the second line:
the values of the secret variables of the environment (``GATEWAY_CONTROL_KEY``, the private key's passphrase,
any ``*_CONTROL_KEY``) are remembered when the run starts, and every report is passed through ``mask_text``.
"""

from __future__ import annotations

import contextlib
import itertools
import linecache
import os
from collections.abc import Generator, Iterable, Mapping
from types import TracebackType
from typing import Any

import allure_commons
import pytest

from toolkit.envnames import ENV_VARS
from toolkit.fields import ascii_digits
from toolkit.masking import cvvs_in, is_cvv_name, mask_cvvs, mask_text, remember_secret

SECRET_SUFFIXES = ("CONTROL_KEY", "PASSPHRASE", "_SECRET", "_TOKEN")


def remember_environment_secrets(env: Mapping[str, str] | None = None) -> None:
    """The values of the environment's secret variables: masked wherever they show from now on."""
    env = os.environ if env is None else env
    names = {ENV_VARS["control_key"], ENV_VARS["private_key_passphrase"], "GATEKIT_CONTROL_TOKEN"}
    for name, value in env.items():
        if (name in names or name.endswith(SECRET_SUFFIXES)) and value:
            remember_secret(value)


def scrub(report: Any, cvvs: frozenset[str] = frozenset()) -> frozenset[str]:
    """Mask the report's traceback and captured sections in place.  ``cvvs``: CVVs known to be in it (``frame_cvvs``);
    those found in the traceback with their name are added, and all of them returned (for ``scrub_exception``)."""
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (a skip's longrepr is a (path, line, reason))
        report.longrepr = (longrepr[0], longrepr[1], mask_text(str(longrepr[2])))
    elif longrepr is not None:
        cvvs |= cvvs_in(str(longrepr))
        report.longrepr = _masked(longrepr, cvvs, set())
    sections = getattr(report, "sections", None)
    if sections:
        report.sections = [(title, mask_text(content)) for title, content in sections]
    return cvvs


# Attributes of pytest's representations that are no text to mask: where a frame is, and how it is drawn.
_KEPT = frozenset({"path", "filename", "lineno", "firstlineno", "style", "entrysep"})


def _masked(value: Any, cvvs: frozenset[str], seen: set[int]) -> Any:
    """``value`` masked: a string, a list or tuple of them, or one of pytest's representations (anything with a
    ``toterminal``: ``ExceptionChainRepr``, ``ReprEntry``, ``ReprLocals``...), masked in place, attribute by
    attribute, whatever its class (a new pytest's, a plugin's)."""
    if isinstance(value, str):
        return mask_cvvs(mask_text(value), cvvs)
    if type(value) in (list, tuple):  # (pytest's own; a subclass, a named tuple, is left as it is)
        return type(value)(_masked(item, cvvs, seen) for item in value)
    if hasattr(value, "toterminal") and hasattr(value, "__dict__") and id(value) not in seen:
        seen.add(id(value))
        for name, item in list(vars(value).items()):
            if name not in _KEPT:
                with contextlib.suppress(AttributeError):  # (a frozen one keeps what it has)
                    setattr(value, name, _masked(item, cvvs, seen))
    return value


def frame_cvvs(traceback: TracebackType | None) -> frozenset[str]:
    """The CVVs the failing frames hold under a CVV name: a local (``cvv2 = "987"``), a key of a mapping in one
    (``fields = {"cvv2": "987"}``), or in the line each frame runs (``assert cvv2 == "123"``).  A report that shows
    neither the assignment nor the locals (``--tb=short``, ``--tb=native``, ``--tb=line``) still shows the values
    in pytest's explanation (``assert '987' == '123'``)."""
    found: set[str] = set()
    while traceback is not None:
        found.update(cvvs_in(linecache.getline(traceback.tb_frame.f_code.co_filename, traceback.tb_lineno)))
        for name, value in traceback.tb_frame.f_locals.items():
            found.update(_cvvs_under(name, value))
            if isinstance(value, Mapping):
                with contextlib.suppress(Exception):  # (a mapping of the test's own that cannot be read)
                    for key, item in itertools.islice(value.items(), _MAPPING_ITEMS_READ):
                        found.update(_cvvs_under(key, item))
        traceback = traceback.tb_next
    return frozenset(found)


_MAPPING_ITEMS_READ = 1000  # (of a mapping among the locals: a bigger one is read in part)


def _cvvs_under(name: object, value: object) -> tuple[str, ...]:
    """``value``, when it is a CVV (3 or 4 digits, a string or a number) under a CVV name."""
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 9999:
        shown = str(value)
    elif isinstance(value, str) and len(value) <= _LONGEST_CVV_TEXT:
        shown = value.strip()
    else:
        return ()
    is_cvv = len(shown) in (3, 4) and ascii_digits(shown) and isinstance(name, str) and is_cvv_name(name)
    return (shown,) if is_cvv else ()


_LONGEST_CVV_TEXT = 16  # characters (a CVV with blanks around it)


def scrub_exception(error: BaseException | None, cvvs: frozenset[str] = frozenset()) -> None:
    """Mask the exception's message in place, when masking changes it (what Allure shows as the message is the
    exception itself, not the report): its ``args`` become the masked text.  ``cvvs``: those of its report."""
    if error is None:
        return
    try:
        text = str(error)
    except Exception:  # (an exception whose __str__ fails: nothing to mask by)
        return
    masked = mask_cvvs(mask_text(text), cvvs)
    if masked != text:
        error.args = (masked,)


class AllureScrubber:
    """Hook wrappers of ``allure_commons``: the status details of a result, of its steps and of its fixtures masked
    just before they are written.  allure-pytest makes those of a step or a fixture from the exception and its
    traceback (``traceback.format_tb``: the source line of each frame, no locals) when the step ends, before
    pytest's report of the test is made and masked: the CVVs found in the run's reports (``remember``) are hidden
    there too."""

    def __init__(self) -> None:
        self.cvvs: frozenset[str] = frozenset()

    def remember(self, cvvs: frozenset[str]) -> None:
        if not cvvs <= self.cvvs:
            self.cvvs |= cvvs

    @allure_commons.hookimpl(hookwrapper=True)
    def report_result(self, result: Any) -> Generator[None, None, None]:
        scrub_allure([result], self.cvvs)
        yield

    @allure_commons.hookimpl(hookwrapper=True)
    def report_container(self, container: Any) -> Generator[None, None, None]:
        scrub_allure([*(container.befores or ()), *(container.afters or ())], self.cvvs)
        yield


def scrub_allure(items: Iterable[Any], cvvs: frozenset[str] = frozenset()) -> None:
    """The status details (message, trace) of Allure results, steps or fixtures, and of their steps, masked in
    place; a CVV found with its name in one is hidden in all of them, with ``cvvs``."""
    details = [found for item in items for found in _status_details(item)]
    texts = [text for detail in details for text in (detail.message, detail.trace) if text]
    cvvs |= cvvs_in("\n".join(texts)) if texts else frozenset()
    for detail in details:
        for name in ("message", "trace"):
            text = getattr(detail, name, None)
            if text:
                setattr(detail, name, mask_cvvs(mask_text(text), cvvs))


def _status_details(item: Any) -> list[Any]:
    """The status details of an item and of its steps, depth first."""
    found = [item.statusDetails] if getattr(item, "statusDetails", None) is not None else []
    for step in getattr(item, "steps", None) or ():
        found += _status_details(step)
    return found


def install_allure_scrubber(config: pytest.Config) -> None:
    """Mask the Allure results of this run (when allure-pytest writes any: ``--alluredir``)."""
    if not getattr(config.option, "allure_report_dir", None):
        return
    scrubber = AllureScrubber()
    config.stash[ALLURE_SCRUBBER] = scrubber
    allure_commons.plugin_manager.register(scrubber)
    config.add_cleanup(lambda: allure_commons.plugin_manager.unregister(scrubber))


ALLURE_SCRUBBER = pytest.StashKey[AllureScrubber]()


def remember_cvvs(config: pytest.Config, cvvs: frozenset[str]) -> None:
    """CVVs found in a report of this run: hidden in the Allure results written from now on."""
    scrubber = config.stash.get(ALLURE_SCRUBBER, None)
    if scrubber is not None and cvvs:
        scrubber.remember(cvvs)
