"""``gatekit certify``: the certification suite against a profile, with Allure and JUnit reports.

    gatekit certify [--profile NAME] [--suite DIR] [--tags EXPR] [--list | --list-tags | --check]

gatekit's own flows run with the merchant's feature files (``--suite DIR``, or ``./features``),
all of them with gatekit's steps plus the merchant's ``conftest.py``.  A profile, suite or tag
expression that cannot be used is refused in one line (exit status 2) before anything runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.certify.options import IN_FLIGHT, MAX_IN_FLIGHT
from toolkit.commands.common import Subparsers, UsageError

EXIT_INTERRUPTED = 130  # (128 + SIGINT, as shells report a command that Ctrl-C stopped)

if TYPE_CHECKING:  # pytest and pytest-bdd are imported when the command runs, not when the CLI starts
    from toolkit.certify.catalog import Entry
    from toolkit.certify.runner import CertifyOptions


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "certify",
        help="run the certification suite against a profile, with reports",
        description="Run gatekit's certification flows and your own feature files against a profile; "
        "write Allure results, JUnit XML and an HTML report.",
        epilog="exit status: 0 every flow passed, 1 a flow failed, 2 it could not run (one line says why), "
        "130 interrupted (Ctrl-C, SIGTERM: the previous run's reports are kept)",
    )
    parser.add_argument(
        "--profile", help="simulator (default), sandbox or a [profiles.NAME] of gatekit.toml (GATEKIT_PROFILE)"
    )
    parser.add_argument(
        "--config", type=Path, help="TOML file with named profiles (default: gatekit.toml or GATEKIT_CONFIG)"
    )
    parser.add_argument(
        "--suite",
        type=Path,
        metavar="DIR",
        help="your own .feature files, run beside gatekit's flows (default: GATEKIT_SUITE, else ./features if present)",
    )
    parser.add_argument(
        "--suite-only", action="store_true", help="run only the --suite features, not gatekit's own flows"
    )
    parser.add_argument(
        "--tags", metavar="EXPR", help="marker expression over Gherkin tags, e.g. 'threeds and not simulator'"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the flows and scenarios that would run, with their tags"
    )
    parser.add_argument(
        "--list-tags", action="store_true", help="list the tags --tags can use, with their scenario counts"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="check the feature files and run nothing: every step has a phrase, every value is known (exit 2 if "
        "not, one line per problem with the closest phrases or the valid values)",
    )
    parser.add_argument("--results", type=Path, default=Path("allure-results"), help="Allure results directory")
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="JUnit XML and HTML report directory")
    parser.add_argument(
        "--in-flight",
        "-n",
        "--workers",
        dest="workers",
        type=_in_flight,
        default=0,
        metavar="N",
        help="scenarios run at once, each in a pytest-xdist worker waiting on one order at a time (default: 1 on the "
        f"embedded simulator; elsewhere the profile's in_flight, else {IN_FLIGHT}); 1 runs them one after another",
    )
    parser.add_argument("--no-html", action="store_true", help="skip the Allure HTML report")
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="embedded simulator only: forgive what the production gateway refuses (the journal warns)",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="DIR",
        help="record every scenario as HAR 1.2 in DIR (masked), with index.json, for gatekit drift DIR",
    )
    parser.set_defaults(handler=run)


def _in_flight(text: str) -> int:
    """``--in-flight N``: a whole number from 1 to ``MAX_IN_FLIGHT``, said in one line otherwise."""
    try:
        number = int(text)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_IN_FLIGHT:
        raise argparse.ArgumentTypeError(f"a whole number from 1 to {MAX_IN_FLIGHT}, not {text!r}")
    return number


def run(args: argparse.Namespace) -> int:
    from toolkit.certify.catalog import SelectionError
    from toolkit.certify.runner import CertifyOptions, Interrupted, SuiteError, certify, check
    from toolkit.suite import SuiteMissing

    options = CertifyOptions(profile=args.profile, tags=args.tags, config_file=args.config, suite=args.suite,
                             suite_only=args.suite_only, results=args.results, reports=args.reports,
                             workers=args.workers, html=not args.no_html, lenient=args.lenient,
                             record=args.record)  # fmt: skip
    try:
        if args.list or args.list_tags:
            return show(options, tags_only=args.list_tags)
        if args.check:
            return check(options)
        return certify(options)
    except (SuiteError, SelectionError, SuiteMissing) as error:
        raise UsageError(str(error)) from None
    except Interrupted:
        kept = f"{args.reports}/ and {args.results}/ hold the previous run's files"
        print(f"\ngatekit certify: interrupted; pytest and its browsers were stopped, nothing of this run was kept "
              f"({kept})", file=sys.stderr, flush=True)  # fmt: skip
        return EXIT_INTERRUPTED


def show(options: CertifyOptions, *, tags_only: bool) -> int:
    from toolkit.certify import catalog
    from toolkit.certify.runner import read_suite

    _, entries = read_suite(options, Path.cwd())
    selected = catalog.select(entries, options.tags)
    print("\n".join(tag_lines(selected) if tags_only else scenario_lines(selected)))
    return 0


def scenario_lines(entries: Sequence[Entry]) -> list[str]:
    lines: list[str] = []
    flows: dict[str, list[Entry]] = {}
    for entry in entries:
        flows.setdefault(entry.flow, []).append(entry)
    width = max((len(entry.scenario) for entry in entries), default=0) + 2
    for flow, members in sorted(flows.items()):
        lines += ["", f"{flow}  ({_where(members[0].path)})"]
        lines += [f"  {entry.scenario.ljust(width)}{_tags(entry)}".rstrip() for entry in members]
    lines += [
        "",
        f"{len(entries)} scenarios in {len(flows)} flows; select with --tags EXPR (--list-tags shows the tags)",
    ]
    return lines[1:]


def _tags(entry: Entry) -> str:
    return " ".join("@" + tag for tag in sorted(entry.tags))


def tag_lines(entries: Sequence[Entry]) -> list[str]:
    from toolkit.certify.catalog import tag_counts

    counts = tag_counts(entries)
    width = max((len(tag) for tag in counts), default=3) + 2
    return [
        "tag".ljust(width) + "scenarios",
        *(f"{tag.ljust(width)}{count:9}" for tag, count in sorted(counts.items())),
    ]


def _where(path: Path) -> str:
    from toolkit import suite

    try:
        return f"gatekit: {path.resolve().relative_to(suite.features_dir().resolve())}"
    except ValueError:
        try:
            return str(path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            return str(path)
