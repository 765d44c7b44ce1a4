"""Scenarios exported from the explorer (``toolkit.explorer``): ``features/exported``, or the folder
named by ``GATEKIT_EXPORTED_FEATURES`` (the explorer's tests point it at freshly exported files).

pytest-bdd keeps step definitions per module: the step fixtures of every other step module are
brought in here, so that an exported scenario may use any phrase of the suite.
"""

import importlib
import os
from pathlib import Path

from pytest_bdd import scenarios

STEPS = Path(__file__).resolve().parent
_PREFIX = "pytestbdd_stepdef_"

for _path in sorted(STEPS.glob("test_*.py")):
    if _path.stem != Path(__file__).stem:
        _module = importlib.import_module(f"{__package__}.{_path.stem}")
        globals().update({name: value for name, value in vars(_module).items() if name.startswith(_PREFIX)})

scenarios(os.environ.get("GATEKIT_EXPORTED_FEATURES", str(STEPS.parent / "features" / "exported")))
