"""toolkit.certify.summary: JUnit test cases named by their Gherkin titles, and the Markdown summary for CI."""

from __future__ import annotations

from pathlib import Path

from toolkit.certify.summary import Case, ci_links, markdown, name_test_cases, read_cases, write_markdown

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="features.cards" name="test_a_card_that_is_outcome_is_declined[expired-Expired card]">
  <properties><property name="flow" value="Cards | declines"/>
  <property name="scenario" value="A card that is expired is declined"/></properties>
  <failure message="AssertionError: Order(sale): approved&#10;assert ...">trace</failure>
</testcase>
<testcase classname="features.cards" name="test_an_approved_sale">
  <properties><property name="flow" value="Cards | declines"/>
  <property name="scenario" value="An approved sale"/></properties>
</testcase>
<testcase classname="tests.test_plain" name="test_plain"><skipped message="GATEKIT_BROWSER=off"/></testcase>
</testsuite></testsuites>
"""


FAILURE = "AssertionError: Order(sale): approved\nassert ..."


def test_test_cases_are_named_by_title_and_flow_and_plain_ones_are_kept(tmp_path: Path):
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    name_test_cases(junit)

    assert read_cases(junit) == [
        Case(
            "Cards | declines",
            "A card that is expired is declined",
            "failed",
            "AssertionError: Order(sale): approved\nassert ...",
        ),
        Case("Cards | declines", "An approved sale", "passed"),
        Case("tests.test_plain", "test_plain", "skipped", "GATEKIT_BROWSER=off"),
    ]
    text = junit.read_text()
    assert 'classname="Cards | declines" name="A card that is expired is declined"' in text


def test_the_markdown_has_the_verdict_a_row_per_flow_failures_skips_and_links():
    cases = [
        Case("Cards | declines", "A card that is expired is declined", "failed", "AssertionError: `x`\nmore"),
        Case("Cards | declines", "An approved sale", "passed"),
        Case("Refunds", "A refund", "skipped", "GATEKIT_BROWSER=off"),
    ]
    text = markdown(cases, [("Allure report", "allure-report/index.html")], profile="simulator", seconds=1.25)

    assert text.splitlines() == [
        "## ❌ gatekit certification: FAIL",
        "",
        "3 scenarios in 2 flows: 1 passed, 1 failed, 1 skipped, in 1.2 s; profile `simulator`",
        "",
        "| Flow | Verdict | Passed | Failed | Skipped |",
        "|---|---|---:|---:|---:|",
        "| Cards \\| declines | ❌ FAIL | 1 | 1 | 0 |",
        "| Refunds | ⏭️ SKIP | 0 | 0 | 1 |",
        "",
        "### Failures",
        "",
        "- **Cards \\| declines**: A card that is expired is declined: `AssertionError: 'x'`",
        "",
        "<details><summary>Skipped (1)</summary>",
        "",
        "- **Refunds**: 1 × GATEKIT_BROWSER=off",
        "",
        "</details>",
        "",
        "[Allure report](allure-report/index.html)",
    ]


def test_a_passing_run_says_pass_and_masks_card_data_in_reasons():
    text = markdown([Case("Sale", "A sale", "passed")], [], profile="sandbox", seconds=3)
    assert text.startswith("## ✅ gatekit certification: PASS\n\n1 scenario in 1 flow: 1 passed")
    failed = markdown([Case("Sale", "A sale", "failed", "card 4444555566661111 refused")], [], profile="p", seconds=1)
    assert "4444555566661111" not in failed and "444455******1111" in failed


def test_links_to_the_ci_run():
    github = {"GITHUB_SERVER_URL": "https://ghe.acme", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_RUN_ID": "7"}
    assert ci_links(github) == [("CI run (reports as artifacts)", "https://ghe.acme/acme/shop/actions/runs/7")]
    assert ci_links({"CI_JOB_URL": "https://gitlab.acme/shop/-/jobs/9"}) == [
        ("CI job (reports as artifacts)", "https://gitlab.acme/shop/-/jobs/9")
    ]
    assert ci_links({}) == []


def test_the_summary_links_the_report_relatively_or_where_it_is_published(tmp_path: Path):
    junit = tmp_path / "reports" / "junit.xml"
    junit.parent.mkdir()
    junit.write_text(JUNIT)
    report = tmp_path / "reports" / "allure-report" / "index.html"

    written = write_markdown(junit, profile="simulator", seconds=1, report=report, env={})
    assert written == tmp_path / "reports" / "summary.md"
    assert written.read_text().endswith("[Allure report](allure-report/index.html) · [JUnit XML](junit.xml)\n")
    published = {"GATEKIT_REPORT_URL": "https://acme.github.io/shop/report/"}
    text = write_markdown(junit, profile="simulator", seconds=1, report=report, env=published).read_text()
    assert "[Allure report](https://acme.github.io/shop/report/)" in text
