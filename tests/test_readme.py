"""The README's Python examples that start their own simulator run as written (the client, 3-D Secure)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
RUNNABLE = [block for block in re.findall(r"```python\n(.*?)```", README, re.DOTALL) if "SimulatorServer()" in block]


def test_the_first_python_example_of_the_client_starts_its_own_simulator():
    client = README[README.index("## The client") :]
    first = re.search(r"```python\n(.*?)```", client, re.DOTALL)
    assert first is not None and "with SimulatorServer() as simulator:" in first.group(1)
    assert len(RUNNABLE) >= 2 and any("upload_cres_result" in block for block in RUNNABLE)


@pytest.mark.parametrize("block", RUNNABLE, ids=[f"example {n}" for n in range(1, len(RUNNABLE) + 1)])
def test_the_readme_examples_run_as_written(block: str):
    exec(compile(block, "README.md", "exec"), {"__name__": "readme_example"})
