"""After a run: test cases named by their Gherkin titles in the JUnit XML, and a Markdown summary a CI job can post.

The run's JUnit XML carries each test case's flow and title as properties (``toolkit.certify.progress``);
``name_test_cases`` names every case by its title (``classname`` = its flow), so CI test reports show
``3-D Secure sale / The payer passes the 3-D Secure 2 challenge``.  ``write_markdown`` reads the XML
back and writes ``summary.md`` beside it: the verdict, a table per flow, the failures with their
reasons, the reasons of the skips, and links to the reports and the CI run.  On GitHub Actions::

    - run: cat reports/summary.md >> "$GITHUB_STEP_SUMMARY"
      if: always()
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.certify.progress import FLOW_PROPERTY, SCENARIO_PROPERTY
from toolkit.masking import mask_text

FILE = "summary.md"
ICONS = {"PASS": "✅", "FAIL": "❌", "SKIP": "⏭️", "NOT RUN": "⛔"}
NOT_COLLECTED = "not-collected"  # a feature file pytest could not collect (toolkit.certify.check): nothing ran


@dataclass(frozen=True)
class Case:
    flow: str
    title: str
    outcome: str  # passed, failed, skipped, or NOT_COLLECTED
    message: str = ""


@dataclass
class Flow:
    cases: list[Case] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(case.outcome == outcome for case in self.cases)

    @property
    def verdict(self) -> str:
        return "FAIL" if self.count("failed") else ("PASS" if self.count("passed") else "SKIP")


def _properties(case: ET.Element) -> dict[str, str]:
    return {prop.get("name", ""): prop.get("value", "") for prop in case.iter("property")}


def name_test_cases(junit: Path) -> None:
    """Each test case named by its Gherkin title, its ``classname`` the flow (cases without them are kept)."""
    tree = ET.parse(junit)
    for case in tree.getroot().iter("testcase"):
        properties = _properties(case)
        if properties.get(SCENARIO_PROPERTY):
            case.set("name", properties[SCENARIO_PROPERTY])
            case.set("classname", properties.get(FLOW_PROPERTY) or case.get("classname") or "")
    tree.write(junit, encoding="utf-8", xml_declaration=True)


def read_cases(junit: Path) -> list[Case]:
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        properties = _properties(case)
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        outcome = "failed" if problem is not None else "skipped" if skipped is not None else "passed"
        detail = problem if problem is not None else skipped
        message = detail.get("message", "") if detail is not None else ""
        flow = properties.get(FLOW_PROPERTY) or case.get("classname") or ""
        title = properties.get(SCENARIO_PROPERTY) or case.get("name") or ""
        if problem is not None and message == "collection failure":
            outcome, message = NOT_COLLECTED, problem.text or message
        cases.append(Case(flow, title, outcome, message or ""))
    return cases


def ci_links(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Links to where this run lives in CI: the GitHub Actions run, the GitLab job (with its artifacts)."""
    links = []
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        run = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
        links.append(("CI run (reports as artifacts)", run))
    if env.get("CI_JOB_URL"):
        links.append(("CI job (reports as artifacts)", env["CI_JOB_URL"]))
    return links


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


REASON_LIMIT = 400


def _reason(message: str) -> str:
    """The message's first line, whole up to ``REASON_LIMIT`` characters, else cut between words, never in one."""
    line = mask_text(message).strip().splitlines()[0] if message.strip() else "failed"
    if len(line) > REASON_LIMIT:
        cut = line[:REASON_LIMIT]
        line = (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(" ,;:") + " …"
    return line.replace("`", "'")


def markdown(
    cases: Sequence[Case], links: Sequence[tuple[str, str]], *, profile: str, seconds: float, note: str = ""
) -> str:
    not_collected = [case for case in cases if case.outcome == NOT_COLLECTED]
    if not_collected:
        return _not_run(not_collected, links, profile=profile)
    flows: dict[str, Flow] = defaultdict(Flow)
    for case in cases:
        flows[case.flow].cases.append(case)
    totals = Counter(case.outcome for case in cases)
    verdict = "FAIL" if totals["failed"] else "PASS" if totals["passed"] else "SKIP"
    lines = [
        f"## {ICONS[verdict]} gatekit certification: {verdict}",
        "",
        f"{_plural(len(cases), 'scenario')} in {_plural(len(flows), 'flow')}: {totals['passed']} passed, "
        f"{totals['failed']} failed, {totals['skipped']} skipped, in {seconds:.1f} s; profile `{profile}`"
        + (f" ({_cell(note)})" if note else ""),
        "",
        "| Flow | Verdict | Passed | Failed | Skipped |",
        "|---|---|---:|---:|---:|",
    ]
    for name, result in sorted(flows.items()):
        counts = " | ".join(str(result.count(outcome)) for outcome in ("passed", "failed", "skipped"))
        lines.append(f"| {_cell(name)} | {ICONS[result.verdict]} {result.verdict} | {counts} |")
    failed = [case for case in cases if case.outcome == "failed"]
    if failed:
        lines += ["", "### Failures", ""]
        lines += [f"- **{_cell(c.flow)}**: {_cell(c.title)}: `{_reason(c.message)}`" for c in failed]
    skips = Counter((case.flow, _reason(case.message)) for case in cases if case.outcome == "skipped")
    if skips:
        lines += ["", f"<details><summary>Skipped ({sum(skips.values())})</summary>", ""]
        lines += [f"- **{_cell(flow)}**: {count} × {_cell(reason)}" for (flow, reason), count in sorted(skips.items())]
        lines += ["", "</details>"]
    if links:
        lines += ["", " · ".join(f"[{text}]({url})" for text, url in links)]
    return "\n".join(lines) + "\n"


def _not_run(cases: Sequence[Case], links: Sequence[tuple[str, str]], *, profile: str) -> str:
    problems = [line for case in cases for line in mask_text(case.message).strip().splitlines()]
    lines = [f"## {ICONS['NOT RUN']} gatekit certification: NOT RUN", "",
             f"Nothing ran against profile `{profile}`: pytest could not collect these feature files (a step no "
             "phrase matches, a value its phrase does not know; `gatekit certify --check` shows the same lines).",
             "",
             "### Feature files that cannot run", ""]  # fmt: skip
    lines += [f"- `{problem.replace('`', chr(39))}`" for problem in problems]
    if links:
        lines += ["", " · ".join(f"[{text}]({url})" for text, url in links)]
    return "\n".join(lines) + "\n"


def write_markdown(
    junit: Path,
    *,
    profile: str,
    seconds: float,
    report: Path | None,
    env: Mapping[str, str] | None = None,
    note: str = "",
) -> Path:
    """``summary.md`` beside the JUnit XML; ``report``: the HTML report when one was made (linked relatively)."""
    env = os.environ if env is None else env
    links: list[tuple[str, str]] = []
    if env.get("GATEKIT_REPORT_URL"):
        links.append(("Allure report", env["GATEKIT_REPORT_URL"]))
    elif report is not None:
        links.append(("Allure report", os.path.relpath(report, junit.parent)))
    links += [("JUnit XML", junit.name), *ci_links(env)]
    target = junit.parent / FILE
    target.write_text(markdown(read_cases(junit), links, profile=profile, seconds=seconds, note=note), encoding="utf-8")
    return target
