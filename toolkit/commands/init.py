"""``gatekit init [DIR]``: scaffold a merchant's repository for gatekit.

Writes a ``gatekit.toml`` with a sandbox profile whose secrets come from the environment, an example
feature that uses gatekit's phrases and one of the merchant's own (``conftest.py``), a ``pytest.ini``
and ``tests/`` for plain ``pytest``, a ``.gitignore`` for the reports, an Allure configuration, and CI
files for GitHub Actions and GitLab CI that run ``gatekit certify`` and publish the Allure report and
the JUnit XML.  As written, ``pytest`` and ``gatekit certify`` pass against the embedded simulator.
Existing files are left alone (the command says which) unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
from importlib import metadata, resources
from pathlib import Path

from toolkit._version import ALLURE_VERSION, __version__
from toolkit.commands.common import Subparsers, UsageError

# file written -> template in toolkit/scaffold/ (the Allure configuration is gatekit certify's own)
FILES = {
    "gatekit.toml": "gatekit.toml.tmpl",
    "features/checkout.feature": "checkout.feature.tmpl",
    "conftest.py": "conftest.py.tmpl",
    "tests/test_features.py": "test_features.py.tmpl",
    "pytest.ini": "pytest.ini.tmpl",
    ".gitignore": "gitignore.tmpl",
    "allurerc.mjs": "../certify/allurerc.mjs",
    ".github/workflows/gatekit.yml": "github-workflow.yml.tmpl",
    ".gitlab-ci.yml": "gitlab-ci.yml.tmpl",
}
NEXT_STEPS = """\
Next, in {where}:
  pytest                              our features against the embedded simulator
  gatekit certify                     gatekit's flows and ours, with Allure results and JUnit XML
  gatekit certify --list              what can run, with its tags (--list-tags, --tags EXPR)
  gatekit certify --profile sandbox   after setting GATEWAY_BASE_URL, GATEWAY_ENDPOINT_ID,
                                      GATEWAY_LOGIN and GATEWAY_CONTROL_KEY (see gatekit.toml)"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "init",
        help="scaffold a repository: profiles, an example feature, conftest.py, CI files",
        description="Scaffold a merchant's repository: gatekit.toml, an example feature, conftest.py, "
        "pytest.ini, .gitignore and CI files for GitHub Actions and GitLab CI.",
    )
    parser.add_argument(
        "directory", metavar="DIR", nargs="?", type=Path, default=Path("."), help="where (default: here)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    parser.set_defaults(handler=run)


def install_spec() -> tuple[str, str | None]:
    """What CI should ``pip install`` to get this gatekit, and a warning when CI cannot install it that way.

    From how pip installed it here (PEP 610 ``direct_url.json``): a git checkout or a URL is installed again
    from there; from a package index, ``gatekit==VERSION``; from a local wheel or folder, which CI does not
    have, ``gatekit==VERSION`` and a warning that says what to set instead.
    """
    pinned = f"gatekit=={__version__}"
    try:
        raw = metadata.distribution("gatekit").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        raw = None
    if not raw:
        return pinned, None
    try:
        direct = json.loads(raw)
    except ValueError:
        return pinned, None
    url = str(direct.get("url", ""))
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and url and not url.startswith("file:"):
        commit = vcs.get("requested_revision") or vcs.get("commit_id")
        return f"gatekit @ {vcs.get('vcs', 'git')}+{url}" + (f"@{commit}" if commit else ""), None
    if url.startswith(("http://", "https://")):
        return f"gatekit @ {url}", None
    where = url.removeprefix("file://") or "a local file"
    return pinned, (
        f"gatekit was installed from {where}, which CI does not have: the CI files install GATEKIT_INSTALL "
        f"(default {pinned}, from your package index); set it to a wheel committed to the repository "
        f"(./vendor/gatekit-{__version__}-py3-none-any.whl) or a git URL if your index does not have gatekit"
    )


def render(template: str) -> str:
    path = f"scaffold/{template}".replace("scaffold/../", "")  # "../certify/allurerc.mjs": gatekit certify's own
    text = resources.files("toolkit").joinpath(*path.split("/")).read_text(encoding="utf-8")
    text = text.replace("@GATEKIT_VERSION@", __version__).replace("@ALLURE_VERSION@", ALLURE_VERSION)
    return text.replace("@GATEKIT_INSTALL@", install_spec()[0]) if "@GATEKIT_INSTALL@" in text else text


def scaffold(directory: Path, *, force: bool = False) -> list[Path]:
    """Write the files; UsageError naming the ones that exist (nothing is written then) unless ``force``."""
    existing = [name for name in FILES if (directory / name).exists()]
    if existing and not force:
        raise UsageError(f"{directory}: {', '.join(existing)} exist already (--force overwrites them)")
    written = []
    for name, template in FILES.items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(template), encoding="utf-8")
        written.append(target)
    return written


def run(args: argparse.Namespace) -> int:
    directory: Path = args.directory
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a directory")
    written = scaffold(directory, force=args.force)
    print(f"gatekit init: wrote {len(written)} files in {directory.resolve()}")
    for path in written:
        print(f"  {path.relative_to(directory)}")
    where = "this directory" if directory.resolve() == Path.cwd().resolve() else str(directory)
    warning = install_spec()[1]
    if warning:
        print(f"note: {warning}")
    print(NEXT_STEPS.format(where=where))
    return 0
