"""``gatekit notebooks [DIR]``: copy gatekit's walkthrough notebooks out of the installed package.

They are shipped without outputs; each starts the simulator inside its kernel, so they run anywhere
gatekit is installed with the ``notebook`` extra (``lab`` adds JupyterLab).  A notebook that needs another
extra names it in its metadata (``"gatekit": {"extras": ["load"]}``), and the command says so beside it when
that extra is not installed (its requirements, as gatekit's own metadata lists them, are not all there).
Existing notebooks are left alone (the command names them) unless ``--force``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
from pathlib import Path

from toolkit.commands.common import Subparsers, UsageError

NEXT_STEPS = """\
Next:
  pip install 'gatekit[notebook,lab]'   the notebook views, the widget explorer and JupyterLab
  jupyter lab {where}"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "notebooks",
        help="copy gatekit's walkthrough notebooks into DIR (default ./notebooks)",
        description="Copy gatekit's walkthrough notebooks (quickstart, 3-D Secure, refunds, signing debugger, "
        "explorer, drift, load) out of the installed package; a notebook that needs an extra not installed "
        "says so.",
    )
    parser.add_argument("directory", metavar="DIR", nargs="?", type=Path, default=Path("notebooks"),
                        help="where (default: ./notebooks)")  # fmt: skip
    parser.add_argument("--force", action="store_true", help="overwrite notebooks that exist")
    parser.set_defaults(handler=run)


def copy_notebooks(directory: Path, *, force: bool = False) -> list[Path]:
    from toolkit import suite

    try:
        sources = sorted(suite.notebooks_dir().glob("*.ipynb"))
    except suite.SuiteMissing as error:
        raise UsageError(str(error)) from None
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a directory")
    existing = [source.name for source in sources if (directory / source.name).exists()]
    if existing and not force:
        raise UsageError(f"{directory}: {', '.join(existing)} exist already (--force overwrites them)")
    directory.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copyfile(source, directory / source.name)) for source in sources]


def notebook_extras(path: Path) -> tuple[str, ...]:
    """The extras ``path`` needs beyond ``notebook``: its metadata's ``gatekit.extras``."""
    metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    return tuple(metadata.get("gatekit", {}).get("extras", ()))


def installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def extra_installed(extra: str) -> bool:
    """Every requirement of gatekit's ``extra`` is installed (False when gatekit's metadata is not there)."""
    from packaging.requirements import Requirement

    try:
        requires = importlib.metadata.requires("gatekit") or []
    except importlib.metadata.PackageNotFoundError:
        return False
    needed = [found for found in map(Requirement, requires) if found.marker and found.marker.evaluate({"extra": extra})]
    return bool(needed) and all(installed(requirement.name) for requirement in needed)


def run(args: argparse.Namespace) -> int:
    copied = copy_notebooks(args.directory, force=args.force)
    print(f"gatekit notebooks: copied {len(copied)} notebooks to {args.directory.resolve()}")
    for path in copied:
        missing = [extra for extra in notebook_extras(path) if not extra_installed(extra)]
        needs = f"gatekit[{','.join(missing)}]"
        print(f"  {path.name}" + (f"  needs {needs}, not installed here: pip install '{needs}'" if missing else ""))
    print(NEXT_STEPS.format(where=args.directory))
    return 0
