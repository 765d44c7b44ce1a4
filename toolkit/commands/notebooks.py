"""``gatekit notebooks [DIR]``: copy gatekit's walkthrough notebooks out of the installed package.

They are shipped without outputs; each starts the simulator inside its kernel, so they run anywhere
gatekit is installed with the ``notebook`` extra (``lab`` adds JupyterLab).  Existing notebooks are left
alone (the command names them) unless ``--force``.
"""

from __future__ import annotations

import argparse
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
        "explorer, drift) out of the installed package.",
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


def run(args: argparse.Namespace) -> int:
    copied = copy_notebooks(args.directory, force=args.force)
    print(f"gatekit notebooks: copied {len(copied)} notebooks to {args.directory.resolve()}")
    for path in copied:
        print(f"  {path.name}")
    print(NEXT_STEPS.format(where=args.directory))
    return 0
