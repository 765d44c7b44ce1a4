"""The payer in a real browser: headless Chromium driven by Selenium, beside the plain-HTTP ``Payer``.

The same pages, the same element ids: a real browser runs the JavaScript auto-submits itself, so
after the last step it lands on the merchant's ``redirect_url`` with the signed outcome.
Chromium and ChromeDriver come from Debian (``chromium``, ``chromium-driver``; ``make`` installs them).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolkit.testdata.cards import Card
from toolkit.testdata.outcomes import CHALLENGE_PASSWORD

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


class BrowserUnavailable(RuntimeError):
    """No Chromium or ChromeDriver on this machine; the message says how to install them."""


def find_browser() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        raise BrowserUnavailable("Chromium and ChromeDriver are needed: apt-get install chromium chromium-driver")
    return chromium, driver


def screenshot_html(html: str, *, width: int = 800, height: int = 600, timeout: float = 30.0) -> bytes:
    """A PNG of this HTML as headless Chromium draws it (Chromium alone: no ChromeDriver, no Selenium).

    The HTML is drawn from a temporary file; give it safe (``toolkit.display.pages.safe_html``): masked,
    without scripts.  BrowserUnavailable when there is no Chromium or it draws nothing.
    """
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise BrowserUnavailable("Chromium is needed for screenshots: apt-get install chromium")
    with tempfile.TemporaryDirectory(prefix="gatekit-shot-") as work:
        source, target = Path(work, "page.html"), Path(work, "page.png")
        source.write_text(html, encoding="utf-8")
        flags = (
            *CHROMIUM_FLAGS,
            f"--user-data-dir={work}/profile",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
        )
        try:
            done = subprocess.run(
                [chromium, *flags, f"--screenshot={target}", source.as_uri()], capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise BrowserUnavailable(f"Chromium drew no screenshot within {timeout:g}s") from None
        if not target.exists():
            why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise BrowserUnavailable(f"Chromium drew no screenshot (exit {done.returncode}): {why[0]}")
        return target.read_bytes()


# Where each page the browser shows goes: (what the payer sees, PNG bytes); the plugin attaches it to Allure.
ScreenshotObserver = Callable[[str, bytes], None]
WINDOW = (1000, 900)


class BrowserPayer:
    """A cardholder in headless Chromium; ``wait`` bounds every wait for a page element.

    With ``observers``, every page the payer reaches (the hosted payment page, the issuer's
    3-D Secure page, where the merchant's redirect lands) is screenshot, before anything is typed
    into it: a screenshot never shows card data the payer typed.
    """

    def __init__(self, *, wait: float = 10.0, observers: Sequence[ScreenshotObserver] = ()) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        chromium, driver = find_browser()
        self._profile = tempfile.mkdtemp(prefix="gatekit-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={self._profile}"):
            options.add_argument(flag)
        try:
            self.driver: Any = webdriver.Chrome(service=Service(driver), options=options)
        except BaseException:  # no browser to close() later: do not leave the profile behind
            shutil.rmtree(self._profile, ignore_errors=True)
            raise
        self.wait = wait
        self.observers = list(observers)
        self.driver.set_window_size(*WINDOW)

    def close(self) -> None:
        self.driver.quit()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> BrowserPayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _element(self, element_id: str) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.ui import WebDriverWait

        wait = WebDriverWait(self.driver, self.wait)
        wait.until(lambda driver: driver.execute_script("return document.readyState") == "complete")
        return wait.until(expected_conditions.presence_of_element_located((By.ID, element_id)))

    def open(self, url: str) -> None:
        self.driver.get(url)
        self.snapshot("opened the page")

    def snapshot(self, what: str) -> None:
        """Show the page as it is now to the observers (``what``: what the payer just did)."""
        if not self.observers:
            return
        from selenium.webdriver.support.ui import WebDriverWait

        loaded = lambda driver: driver.execute_script("return document.readyState") == "complete"  # noqa: E731
        WebDriverWait(self.driver, self.wait).until(loaded)
        png: bytes = self.driver.get_screenshot_as_png()
        seen = f"Screenshot after the payer {what}: {self.driver.title or 'untitled page'}"
        for observer in self.observers:
            observer(seen, png)

    def fill_payment_page(self, card: Card, **overrides: str) -> None:
        """Type the card into the hosted page's inputs (those it has), press ``pay`` and wait for the next page."""
        form = self._element("payment-form")
        for name, value in {**card.fields(), **overrides}.items():
            inputs = self.driver.find_elements("id", name)
            if inputs:
                inputs[0].clear()
                inputs[0].send_keys(value)
        self._element("pay").click()
        self._left(form)
        self.snapshot("pressed pay")

    def _left(self, element: Any) -> None:
        """Wait until ``element``'s page is gone (the browser loaded what the submit answered)."""
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, self.wait).until(lambda driver: _gone(element))

    def answer_challenge(self, password: str = CHALLENGE_PASSWORD) -> None:
        """Type the password on the ACS page (2.x challenge or 1.0.2) and submit it.

        The ACS page may still be replacing an auto-submitting page when it is first found: an element
        that went stale meanwhile is looked up again, until the wait's deadline.
        """
        from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

        deadline = time.monotonic() + self.wait
        while True:
            try:
                field = self._element("password")
                field.send_keys(password)
                button = "submit-challenge" if self.driver.find_elements("id", "submit-challenge") else "submit-acs"
                self._element(button).click()
                break
            except (StaleElementReferenceException, WebDriverException) as exc:
                stale = isinstance(exc, StaleElementReferenceException) or "does not belong" in str(exc)
                if not stale or time.monotonic() > deadline:
                    raise
        self._left(field)
        self.snapshot("answered the challenge")

    def field_errors(self) -> dict[str, str]:
        elements = self.driver.find_elements("css selector", ".field-error")
        return {element.get_attribute("id").removeprefix("error-"): element.text for element in elements}

    def screenshot(self, path: Path) -> Path:
        self.driver.save_screenshot(str(path))
        return path


def _gone(element: Any) -> bool:
    """The element's page was replaced: Selenium says stale, or Chromium says its node left the document.

    Chromium answers the second ("unhandled inspector error ... does not belong to the document") when it
    is asked about a node while the next page replaces it; ``staleness_of`` lets that through as an error.
    """
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise
    return False
