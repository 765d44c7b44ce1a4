"""scripts/screenshots.py (make screenshots) needs JupyterLab and Chromium to run: here only what it is without them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "screenshots.py"


def test_the_script_explains_itself_without_jupyterlab():
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "JupyterLab" in done.stdout and "--out" in done.stdout


def test_the_lab_renders_every_cell_and_shows_no_news(tmp_path: Path):
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import screenshots
    finally:
        sys.path.remove(str(SCRIPT.parent))
    screenshots.write_settings(tmp_path)
    tracker = tmp_path / "@jupyterlab/notebook-extension/tracker.jupyterlab-settings"
    assert json.loads(tracker.read_text()) == {"windowingMode": "none"}  # cells off screen are drawn too
    assert screenshots.OUT == ROOT / "reports" / "screenshots" / "notebooks"
