"""Screenshots of the certification report, taken in headless Chromium: what a reader of the Allure report sees.

    .venv/bin/python scripts/report_screenshots.py [--out reports/screenshots] [--no-run]

Runs ``gatekit certify`` here (as ``make certify`` does: skipped with ``--no-run`` when
``reports/allure-report`` exists) and on ``tests/failing_suite`` (a suite that fails on purpose, in a
temporary directory), then photographs with Selenium and Debian's Chromium:

- ``report-overview.png``: the report's first page, the flows and their counts;
- ``report-trend.png``: its Graphs, with the trends of earlier runs (``reports/history.jsonl``);
- ``report-3ds-scenario.png``: the 3-D Secure sale in a real browser, its steps expanded: the merchant's
  exchanges, the payer's method-URL load, the screenshot of the issuer's page, the redirect received, and
  the sequence diagram with the browser's visits to the ACS and back to the merchant;
- ``report-3ds-hosted-page.png``: the 3-D Secure card on the hosted payment page: every page as a screenshot
  (the merchant's page it ends on styled, cut to its content), and the diagram;
- ``report-hosted-fields-browser.png``: the Hosted Fields checkout in a real browser: the merchant's checkout page
  with the gateway's card iframes (ready, empty), the SDK's tokenize call, the v4 sale and status, the challenge,
  and the diagram;
- ``report-failing-categories.png``: the failing run's Categories tab, each category opened;
- ``report-failing-tree.png``: the failing run's tree, Failed and Broken apart.

Needs Allure 3 (``npm ci``, as ``make certify`` installs it), Selenium and Chromium (``make install``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from toolkit.payer.browser import CHROMIUM_FLAGS, find_browser

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 1400
SCENARIOS = {
    "report-3ds-scenario.png": "The payer passes the 3-D Secure 2 challenge in a real browser",
    "report-3ds-hosted-page.png": "A 3-D Secure card on the payment page in a real browser",
    "report-hosted-fields-browser.png": "The payer types the card into the gateway's iframes on the merchant's "
    "checkout page in a real browser",
}


def certify(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Path:
    """Run ``gatekit certify`` in ``cwd``; the HTML report it made."""
    path = f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    command = [sys.executable, "-m", "toolkit.cli", "certify", *args]
    done = subprocess.run(command, cwd=cwd, env={**os.environ, "PATH": path, **(env or {})}, check=False)
    index = cwd / "reports" / "allure-report" / "index.html"
    if done.returncode not in (0, 1) or not index.is_file():
        raise SystemExit(f"gatekit certify in {cwd} made no report (exit status {done.returncode})")
    return index


@contextmanager
def chromium() -> Iterator[Any]:
    browser, driver = find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (*CHROMIUM_FLAGS, f"--window-size={WIDTH},1000"):
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def wait(driver: Any, found: Callable[[Any], Any], timeout: float = 15.0) -> Any:
    return WebDriverWait(driver, timeout).until(found)


def css(selector: str) -> Callable[[Any], list[Any]]:
    return lambda driver: driver.find_elements(By.CSS_SELECTOR, selector)


def open_report(driver: Any, index: Path) -> None:
    driver.set_window_size(WIDTH, 1000)
    driver.get(index.as_uri())
    wait(driver, css("[data-testid=report-title]"))


def settle(driver: Any) -> None:
    """Let the report's transitions end (no event tells when an expanded section has finished drawing)."""
    time.sleep(0.6)


# The report scrolls inside a pane, not the document: the tallest scrolled element says how tall the page is.
_CONTENT_HEIGHT = """
let tallest = document.documentElement;
for (const element of document.querySelectorAll("*")) {
  if (element.scrollHeight > element.clientHeight + 1 && element.scrollHeight > tallest.scrollHeight) tallest = element;
}
const hidden = tallest.scrollHeight - tallest.clientHeight;
tallest.scrollTop = 0;
return window.innerHeight + Math.max(hidden, 0);
"""


def shoot(driver: Any, target: Path) -> None:
    """The whole page, however tall: the window is stretched to the report's content first."""
    height = driver.execute_script(_CONTENT_HEIGHT)
    driver.set_window_size(WIDTH, min(max(int(height) + 200, 800), 8000))
    settle(driver)
    driver.save_screenshot(str(target))
    print(f"wrote {target}")


def open_scenario(driver: Any, title: str) -> None:
    """Search the tree for a scenario, open its groups and then the scenario itself."""
    search = wait(driver, css("[data-testid=search-input]"))[0]
    search.send_keys(title)
    settle(driver)  # the search is debounced: the tree is drawn again after it
    opened: set[str] = set()
    while not (leaf := _leaf(driver, title)):  # open the groups one by one until the scenario shows
        closed = [e for e in driver.find_elements(By.CSS_SELECTOR, "[data-testid=tree-section-title]")
                  if e.text not in opened]  # fmt: skip
        if not closed:
            raise SystemExit(f"the report shows no scenario {title!r}")
        opened.add(closed[0].text)
        closed[0].click()
        settle(driver)
    leaf[0].click()
    wait(driver, css("[data-testid=test-result-steps-subtree-toggle]"))[0].click()
    settle(driver)
    for header in driver.find_elements(By.CSS_SELECTOR, "[data-testid=test-result-attachment-header]"):
        if "image/png" in header.text or "svg" in header.text:  # page screenshots and the diagram, in place
            header.click()
    wait(driver, css("[data-testid=test-result-attachment] img"))


def _leaf(driver: Any, title: str) -> list[Any]:
    return [e for e in driver.find_elements(By.CSS_SELECTOR, "[data-testid=tree-leaf-title]") if e.text == title]


def open_graphs(driver: Any) -> None:
    """The report's Graphs section: the trends drawn from the history of earlier runs."""
    driver.find_element(By.XPATH, "//button[.//span[normalize-space(.)='Report']]").click()
    wait(driver, lambda d: d.find_elements(By.XPATH, "//*[normalize-space(text())='Graphs']"))[0].click()
    settle(driver)


def open_categories(driver: Any) -> None:
    wait(driver, css("[data-testid=nav-tab-categories]"))[0].click()
    settle(driver)
    for arrow in driver.find_elements(By.CSS_SELECTOR, "[data-testid=tree-arrow]"):
        arrow.click()
    settle(driver)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "screenshots", help="where the PNGs go")
    parser.add_argument("--no-run", action="store_true", help="photograph reports/allure-report as it is")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    passing = ROOT / "reports" / "allure-report" / "index.html"
    if not (args.no_run and passing.is_file()):
        passing = certify(ROOT)
    with tempfile.TemporaryDirectory(prefix="gatekit-failing-") as folder:
        shutil.copytree(ROOT / "tests" / "failing_suite", folder, dirs_exist_ok=True)
        failing = certify(Path(folder), "--suite-only", "--suite", "features", env={"GATEKIT_BROWSER": "off"})
        with chromium() as driver:
            open_report(driver, passing)
            shoot(driver, args.out / "report-overview.png")
            open_graphs(driver)
            shoot(driver, args.out / "report-trend.png")
            for name, title in SCENARIOS.items():
                open_report(driver, passing)
                open_scenario(driver, title)
                shoot(driver, args.out / name)
            open_report(driver, failing)
            shoot(driver, args.out / "report-failing-tree.png")
            open_categories(driver)
            shoot(driver, args.out / "report-failing-categories.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
