"""Screenshots of every notebook in a real JupyterLab, driven by headless Chromium (``make screenshots``).

    python scripts/screenshots.py [--out reports/screenshots/notebooks] [notebooks/02-3ds-walkthrough.ipynb ...]

The notebooks are copied to a temporary folder (JupyterLab saves what it runs; the repository keeps
its notebooks without outputs) and JupyterLab is started there on a free loopback port, with a fresh
workspace, settings that render every cell (no windowing) and no news pop-up.  For each notebook,
Chromium (Selenium, the flags of ``toolkit.payer.browser``) opens it, runs all cells, waits until
every code cell has run, grows the window to the notebook's height and saves a PNG: the whole
notebook as JupyterLab shows it, widgets and pictures included.  It needs the ``lab`` extra
(``make lab`` installs it) and Chromium with ChromeDriver.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
OUT = ROOT / "reports" / "screenshots" / "notebooks"
WIDTH, MAX_HEIGHT = 1400, 16000
RUN_TIMEOUT = 120.0
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}
# Every code cell has run (an execution count), none is running or queued ("[*]"), the kernel is idle.
ALL_RAN = """
const panel = window.jupyterapp.shell.currentWidget;
if (!panel || !panel.content || !panel.sessionContext.session) { return false; }
const kernel = panel.sessionContext.session.kernel;
const cells = panel.content.widgets.filter(cell => cell.model.type === 'code');
const done = cells.every(cell => cell.model.executionCount !== null && cell.promptNode.textContent.indexOf('*') < 0);
return done && kernel !== null && kernel.status === 'idle';
"""
HEIGHT = """
const outer = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
return outer ? outer.scrollHeight : document.body.scrollHeight;
"""
TO_THE_TOP = """
window.jupyterapp.shell.collapseLeft();
window.jupyterapp.shell.collapseRight();
const outer = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
if (outer) { outer.scrollTop = 0; }
"""
ERRORS = """
const panel = window.jupyterapp.shell.currentWidget;
return panel.content.widgets.filter(c => c.model.type === 'code')
  .flatMap(c => c.model.outputs.toJSON()).filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue);
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_settings(folder: Path) -> None:
    for name, values in SETTINGS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@contextmanager
def jupyterlab(workdir: Path) -> Iterator[str]:
    """JupyterLab on a free loopback port serving ``workdir``; yields its base URL with the token."""
    port, token = free_port(), secrets.token_hex(16)
    write_settings(workdir / ".settings")
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--ServerApp.root_dir={workdir / 'notebooks'}", f"--IdentityProvider.token={token}",
        f"--LabApp.user_settings_dir={workdir / '.settings'}", f"--LabApp.workspaces_dir={workdir / '.workspaces'}",
        "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=False",
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]  # fmt: skip
    log = (workdir / "jupyterlab.log").open("w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{base}/api/status?token={token}"), 60, "JupyterLab to start")
        yield f"{base}/lab/tree/{{name}}?token={token}&reset"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def wait_for(check: Any, timeout: float, what: str, every: float = 0.25) -> None:
    """Poll ``check`` until it is true, with a deadline (the page's state has no event to wait on)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:g}s for {what}")
        time.sleep(every)


@contextmanager
def chromium() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    sys.path.insert(0, str(ROOT))
    from toolkit.payer.browser import CHROMIUM_FLAGS, find_browser

    binary, driver_path = find_browser()
    profile = tempfile.mkdtemp(prefix="gatekit-lab-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},1000", "--hide-scrollbars"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def shoot(driver: Any, url: str, name: str, out: Path) -> tuple[Path, list[str]]:
    """Open a notebook, run all its cells, wait until they ran, and save the whole notebook as a PNG."""
    driver.set_window_size(WIDTH, 1000)
    driver.get(url.format(name=name))
    wait_for(lambda: driver.execute_script("return !!(window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                           " && window.jupyterapp.shell.currentWidget.sessionContext"
                                           " && window.jupyterapp.shell.currentWidget.sessionContext.isReady)"),
             60, f"{name} to open with its kernel")  # fmt: skip
    driver.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_for(lambda: driver.execute_script(ALL_RAN), RUN_TIMEOUT, f"every cell of {name} to run", every=0.5)
    time.sleep(1.0)  # widgets and images finish drawing after the kernel is idle: no event marks it
    driver.execute_script(TO_THE_TOP)
    time.sleep(0.5)
    height = min(int(driver.execute_script(HEIGHT)) + 120, MAX_HEIGHT)
    driver.set_window_size(WIDTH, height)
    time.sleep(1.0)  # the layout follows the new window size
    driver.execute_script(TO_THE_TOP)
    target = out / (Path(name).stem + ".png")
    driver.save_screenshot(str(target))
    return target, list(driver.execute_script(ERRORS))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to shoot (default: all of notebooks/)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the PNGs go (default: {OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    chosen = [path.resolve() for path in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gatekit-screenshots-") as work:
        workdir = Path(work)
        (workdir / "notebooks").mkdir()
        for path in chosen:
            shutil.copy(path, workdir / "notebooks" / path.name)
        with jupyterlab(workdir) as url, chromium() as driver:
            for path in chosen:
                started = time.monotonic()
                target, errors = shoot(driver, url, path.name, args.out)
                failed += bool(errors)
                status = "errors: " + "; ".join(errors) if errors else "every cell ran"
                print(f"{target} ({time.monotonic() - started:.1f} s, {status})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
