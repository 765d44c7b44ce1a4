"""The certification suite and the notebooks go into the wheel: the top-level ``features/``, ``steps/`` and
``notebooks/`` are copied to ``toolkit/suite/`` at build time, so the repository keeps one copy (metadata lives
in pyproject.toml); ``gatekit notebooks DIR`` copies the notebooks out of an installed gatekit.

An editable install copies nothing: ``toolkit.suite`` then points at the checkout's own directories.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SUITE = {"features": "**/*.feature", "steps": "**/*.py", "notebooks": "*.ipynb"}


class BuildPyWithSuite(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            self.copy_suite()

    def copy_suite(self) -> None:
        target = Path(self.build_lib) / "toolkit" / "suite"
        for folder, pattern in SUITE.items():
            shutil.rmtree(target / folder, ignore_errors=True)  # a feature removed from the tree leaves the wheel
            for source in sorted(Path(folder).glob(pattern)):
                if "__pycache__" not in source.parts:
                    self.mkpath(str((target / source).parent))
                    self.copy_file(str(source), str(target / source))


setup(cmdclass={"build_py": BuildPyWithSuite})
