"""The walkthrough notebooks: committed clean, run top to bottom against the embedded simulator, leak nothing."""

from __future__ import annotations

import ast
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from toolkit import demo
from toolkit.commands.notebooks import copy_notebooks, notebook_extras
from toolkit.fields import luhn_ok

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
CELL_TIMEOUT = 60  # seconds per cell; each notebook takes a few seconds in all
CARD_RUN = re.compile(r"(?<![\d.])\d{13,19}(?!\d)")  # not the decimals of a float
HEX_ID = re.compile(r"[0-9a-f]{32}")  # widget model ids in the saved widget state: random hex, not card numbers
CVV_VALUE = re.compile(r"(?i)cvv2?\W{0,6}(?:=|:|%3D)\W{0,3}(\d{3,4})(?!\d)")
PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")


def leaks(text: str) -> list[str]:
    """Luhn-valid 13-19 digit numbers, cvv2 values, the demo control key, private keys."""
    found = [f"card number {m}" for m in CARD_RUN.findall(HEX_ID.sub("-", text)) if luhn_ok(m)]
    found += [f"cvv2 {m}" for m in CVV_VALUE.findall(text)]
    found += ["the demo control key"] if demo.CONTROL_KEY in text else []
    return found + (["a private key"] if PRIVATE_KEY.search(text) else [])


def test_the_leak_scanner_finds_what_it_looks_for():
    assert leaks("credit_card_number=4538977399606732&cvv2=321") == ["card number 4538977399606732", "cvv2 321"]
    assert leaks('{"cvv2": "123"}') == ["cvv2 123"]
    assert leaks(f"{demo.CONTROL_KEY} -----BEGIN RSA PRIVATE KEY-----") == ["the demo control key", "a private key"]
    assert leaks("453897******6732 cvv2=*** orderid 8056020 1795312800 elapsed=0.0077159450002000085") == []
    assert leaks('"IPY_MODEL_39718321118647909c7c8cac8b2785d9"') == []
    assert leaks("pan 4538977399606732.") == ["card number 4538977399606732"]


def test_the_eight_walkthroughs_are_there():
    assert [path.stem for path in PATHS] == [
        "01-quickstart", "02-3ds-walkthrough", "03-refunds-and-rebills", "04-signing-debugger", "05-explorer",
        "06-drift", "07-load", "08-hosted-fields",
    ]  # fmt: skip


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_committed_notebooks_carry_no_outputs(path: Path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert "widgets" not in notebook.metadata and notebook.metadata.kernelspec.name == "python3"
    assert leaks(path.read_text()) == []


def test_each_notebook_says_the_extras_it_needs_and_they_are_gatekit_s():
    """A notebook's metadata names what it needs beyond the ``notebook`` extra (``gatekit.extras``)."""
    import tomllib

    extras = tomllib.loads((NOTEBOOKS.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    needs = {path.stem: notebook_extras(path) for path in PATHS}
    assert needs["07-load"] == ("load",) and all(set(named) <= set(extras) for named in needs.values()), needs


def test_gatekit_notebooks_says_which_extra_a_notebook_needs_when_it_is_missing(tmp_path, capsys, monkeypatch):
    from toolkit import cli
    from toolkit.commands import notebooks

    assert cli.main(["notebooks", str(tmp_path / "all")]) == 0  # (this venv has every extra)
    out = capsys.readouterr().out
    assert "  07-load.ipynb\n" in out and "needs" not in out, out
    monkeypatch.setattr(notebooks, "installed", lambda distribution: distribution != "locust")
    assert cli.main(["notebooks", str(tmp_path / "no-load")]) == 0
    out = capsys.readouterr().out
    assert "  07-load.ipynb  needs gatekit[load], not installed here: pip install 'gatekit[load]'\n" in out, out
    assert "  06-drift.ipynb\n" in out, out


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebooks_define_no_library_logic(path: Path):
    """Walkthroughs import toolkit and call it: no functions or classes of their own."""
    notebook = nbformat.read(path, as_version=4)
    source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    tree = ast.parse(source)
    defined = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Lambda))]
    assert defined == []
    if path.stem == "07-load":  # (the simulator runs inside gatekit load, beside Locust)
        assert "from toolkit.load.notebook import run_load" in source
        return
    assert "from toolkit import notebook as nb" in source and "nb.start_simulator(" in source


def _executed(path: Path, where: Path) -> tuple[Any, float]:
    """The notebook as ``gatekit notebooks DIR`` copies it, run with DIR as the kernel's folder: outside this
    checkout, as a user runs it (an export or a recording lands in DIR's project, not in gatekit's tree)."""
    [copied] = [copy for copy in copy_notebooks(where / "notebooks", force=True) if copy.name == path.name]
    notebook = nbformat.read(copied, as_version=4)
    client = NotebookClient(
        notebook, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(copied.parent)}}
    )
    started = time.monotonic()
    client.execute()  # raises CellExecutionError naming the cell that failed
    return notebook, time.monotonic() - started


# What each walkthrough must show: sequence diagrams (SVG), the challenge page (PNG), the live panel.
PICTURES = {
    "01-quickstart": {"image/svg+xml"},
    "02-3ds-walkthrough": {"image/svg+xml"} | (set() if os.environ.get("GATEKIT_BROWSER") == "off" else {"image/png"}),
    "03-refunds-and-rebills": {"image/svg+xml"},
    "05-explorer": {"application/vnd.jupyter.widget-view+json", "text/html"},
    "06-drift": {"text/html"},  # the drift table, and the two diagrams side by side
    "07-load": {"image/svg+xml", "text/markdown"},  # the latency and mix charts, the run's summary
    "08-hosted-fields": {"image/svg+xml", "text/html"},  # the checkout's diagram; the signed ticket call, the sale
}
WIDGET = "application/vnd.jupyter.widget-view+json"


def _panel_is_alive(notebook: Any) -> None:
    """After Run All the explorer is still there: its widget's model is in the saved widget state."""
    views = [out.data[WIDGET]["model_id"] for cell in notebook.cells for out in cell.get("outputs", [])
             if WIDGET in out.get("data", {})]  # fmt: skip
    state = notebook.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    assert views and all(view in state.get("state", {}) for view in views), "the panel was closed by the last cell"
    last = [cell for cell in notebook.cells if cell.cell_type == "code"][-1]
    assert any("a static view" in out.get("data", {}).get("text/html", "") for out in last.outputs)


def _drift_is_shown(outputs: list[Any]) -> None:
    """The stand-in's injected differences in the grouped table, two diagrams side by side, the fitted section (the
    stand-in decides at once: latency 0), and no difference once it is taught."""
    pages = [out["data"]["text/html"] for out in outputs if "text/html" in out.get("data", {})]
    table = next(page for page in pages if "gatekit drift:" in page)
    for expected in (">error-code<", ">descriptor<", ">answer-time<", "Do not honor", "<details"):
        assert expected in table, expected
    pairs = [page for page in pages if "gk-side-by-side" in page]
    assert len(pairs) == 2 and all(page.count("<svg") == 2 for page in pairs)
    assert "A, stand-in: a sale declined" in pairs[0] and "B, simulator: a sale declined" in pairs[0]
    fitted = next(out["text"] for out in outputs if out.get("text", "").startswith("[simulator]"))
    assert "latency = 0\n" in fitted and 'omit_fields = ["descriptor"]' in fitted and '"116" = {' in fitted, fitted
    assert outputs[-2].get("text", "").strip() == "no difference", outputs[-2:]  # (the verdict, then the differences)


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_top_to_bottom_and_leaks_nothing(path: Path, tmp_path: Path):
    notebook, elapsed = _executed(path, tmp_path)
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    shown = {mime for out in outputs for mime in out.get("data", {})}
    assert PICTURES.get(path.stem, set()) <= shown, f"{path.stem} shows {sorted(shown)}"
    if path.stem == "05-explorer":
        _panel_is_alive(notebook)
    if path.stem == "06-drift":
        _drift_is_shown(outputs)
    assert not [out for out in outputs if out.output_type == "error"]
    assert all(cell.execution_count for cell in notebook.cells if cell.cell_type == "code")
    assert len(outputs) >= 5, "a walkthrough shows what it does"
    executed = json.dumps(nbformat.from_dict(notebook), ensure_ascii=False)  # outputs and widget state
    assert leaks(executed) == []
    assert elapsed < 30, f"{path.name} took {elapsed:.1f} s"
