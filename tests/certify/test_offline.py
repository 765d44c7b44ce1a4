"""The HTML report that ``gatekit certify`` makes opens offline: its files name no outside host but in the data the
run put there (Allure 3 writes Google Analytics into every report; ``toolkit.certify.offline`` takes it out)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from toolkit.certify.offline import strip_analytics
from toolkit.certify.options import CertifyOptions
from toolkit.certify.runner import make_html

ROOT = Path(__file__).resolve().parents[2]
ALLURE = ROOT / "node_modules" / ".bin" / "allure"
HOST = re.compile(r"(?i)\b(?:https?:)?//([a-z0-9-]+(?:\.[a-z0-9-]+)+|localhost)(?=[:/\"'`\s)?]|$)")
DATA_ENTRY = re.compile(r'\bd\("([^"]+)","([A-Za-z0-9+/=]*)"\)')  # the run's data: d("data/...", "<base64>")
DATA_URI = re.compile(r"data:[a-z]+/[a-z0-9.+-]+;base64,([A-Za-z0-9+/=]+)")  # Allure's own script, styles, icons
# Named by Allure's own code but never requested when the report is opened:
NEVER_REQUESTED = {
    "www.w3.org",  # XML namespace names (SVG, MathML, XHTML), identifiers only
    "localhost",  # the base for resolving relative URLs when the page has no <base>
    "allurereport.org",  # the footer's "Allure Report" link: followed only when a person clicks it
    "trace.playwright.dev",  # Playwright's trace viewer, opened only from a Playwright trace attachment
}


def _hosts(text: str) -> set[str]:
    return {host.lower() for host in HOST.findall(text)}


def outside_hosts(report: Path) -> tuple[set[str], str]:
    """The hosts the report's own files name (Allure's page, scripts and styles, decoded), and the run's data."""
    named: set[str] = set()
    data = []
    for path in report.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix != ".html":
            data.append(text)  # (summary.json, test-results.json: the run's results)
            continue
        data += [base64.b64decode(value).decode("utf-8", "replace") for _, value in DATA_ENTRY.findall(text)]
        page = DATA_ENTRY.sub("", text)
        named |= _hosts(DATA_URI.sub("", page))
        for encoded in DATA_URI.findall(page):
            named |= _hosts(base64.b64decode(encoded).decode("utf-8", "replace"))
    return named - NEVER_REQUESTED, "\n".join(data)


def _results(folder: Path) -> Path:
    """One scenario whose attachment, link and description name the merchant's own hosts."""
    folder.mkdir()
    attachment = "curl https://sandbox.gateway.example/paynet/api/v2/sale/1001 -d amount=10.42\n"
    (folder / "b0-attachment.txt").write_text(attachment)
    result = {
        "uuid": "a0", "historyId": "h0", "name": "A sale", "fullName": "checkout.feature: A sale", "status": "passed",
        "stage": "finished", "start": 1_700_000_000_000, "stop": 1_700_000_001_000,
        "labels": [{"name": "epic", "value": "Checkout"}, {"name": "feature", "value": "Checkout by card"}],
        "attachments": [{"name": "curl", "source": "b0-attachment.txt", "type": "text/plain"}],
        "links": [{"type": "link", "name": "the order", "url": "https://shop.example.com/orders/1"}],
    }  # fmt: skip
    (folder / "a0-result.json").write_text(json.dumps(result))
    return folder


def test_the_host_scanner_finds_what_it_looks_for(tmp_path: Path):
    script = base64.b64encode(b'fetch("https://telemetry.example.net/v1")').decode()
    data = base64.b64encode(b"https://sandbox.gateway.example/paynet").decode()
    (tmp_path / "index.html").write_text(
        '<script async src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>'
        f'<script src="data:text/javascript;base64,{script}"></script><a href="https://allurereport.org">'
        f'<script>d("data/attachments/b0.txt","{data}")</script>'
    )
    named, run_data = outside_hosts(tmp_path)
    assert named == {"www.googletagmanager.com", "telemetry.example.net"}
    assert "https://sandbox.gateway.example/paynet" in run_data


@pytest.mark.skipif(not ALLURE.exists(), reason="Allure 3 is not installed here (npm ci, as make certify does)")
def test_the_report_certify_makes_names_no_outside_host_but_the_run_s_own(tmp_path: Path):
    options = CertifyOptions(results=_results(tmp_path / "allure-results"), reports=tmp_path / "reports")
    line, index = make_html(options, ROOT)  # (ROOT: Allure from node_modules, gatekit's allurerc.mjs)

    assert index is not None, line
    named, run_data = outside_hosts(index.parent)
    assert named == set(), f"the report requests {sorted(named)} when it is opened"
    assert "curl https://sandbox.gateway.example/paynet/api/v2/sale/1001" in run_data  # the run's data is kept
    assert "https://shop.example.com/orders/1" in run_data


def test_stripping_takes_out_the_analytics_of_every_allure_page_and_nothing_else(tmp_path: Path):
    """The two script tags Allure 3's awesome, classic and dashboard plugins write, as they write them."""
    analytics = """    <script async src="https://www.googletagmanager.com/gtag/js?id=G-LNDJ3J7WT0"></script>
    <script>
        window.dataLayer = window.dataLayer || [];
        function gtag(){dataLayer.push(arguments);}
        gtag('js', new Date());
        gtag('config', 'G-LNDJ3J7WT0', {
          "report": "awesome",
          "allureVersion": "3.18.0",
          "reportUuid": "436db198-d867-401d-be9b-902923b01105",
          "single_file": "true"
        });
    </script>
"""
    page = "<body>\n    <script>\n      window.allure = window.allure || {};\n    </script>\n"
    page += '@    <script async>d("x","")</script>\n</body>'
    (tmp_path / "awesome").mkdir()
    for path in (tmp_path / "index.html", tmp_path / "awesome" / "index.html"):
        path.write_text(page.replace("@", analytics))
    (tmp_path / "clean.html").write_text(page.replace("@", ""))

    changed = strip_analytics(tmp_path)

    assert changed == [tmp_path / "awesome" / "index.html", tmp_path / "index.html"]
    assert all(path.read_text() == page.replace("@", "") for path in tmp_path.rglob("*.html"))
