"""``gatekit certify --profile NAME [--tags EXPR]``: the certification suite with its reports."""

from __future__ import annotations

import argparse
from pathlib import Path

from toolkit.certify.runner import CertifyOptions, certify
from toolkit.commands.common import Subparsers, UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("certify", help="run the certification suite against a profile, with reports")
    parser.add_argument("--profile", default="simulator", help="simulator (default), sandbox or a named profile")
    parser.add_argument(
        "--tags", default=None, help="marker expression over Gherkin tags, e.g. 'threeds and not simulator'"
    )
    parser.add_argument("--config", type=Path, default=None, help="TOML file with named profiles")
    parser.add_argument("--results", type=Path, default=Path("allure-results"), help="Allure results directory")
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="JUnit XML and HTML report directory")
    parser.add_argument("-n", "--workers", type=int, default=0, help="parallel workers (pytest-xdist)")
    parser.add_argument("--no-html", action="store_true", help="skip the Allure HTML report")
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="embedded simulator only: forgive what the production gateway refuses (the journal warns)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    options = CertifyOptions(profile=args.profile, tags=args.tags, config_file=args.config, results=args.results,
                             reports=args.reports, workers=args.workers, html=not args.no_html,
                             lenient=args.lenient)  # fmt: skip
    try:
        return certify(options)
    except FileNotFoundError as exc:  # no features/ and steps/ here: a usage error, on stderr
        raise UsageError(str(exc)) from None
