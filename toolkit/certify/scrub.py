"""What pytest reports, with secrets and card data masked: the traceback of a failure (its locals and the
arguments pytest shows with each frame), and the captured output, before the terminal, JUnit XML and Allure
read them.

Secrets are ``Secret`` values from the moment they are read (``toolkit.config``); this is the second line:
the values of the secret variables of the environment (``GATEWAY_CONTROL_KEY``, the private key's passphrase,
any ``*_CONTROL_KEY``) are remembered when the run starts, and every report is passed through ``mask_text``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from toolkit.envnames import ENV_VARS
from toolkit.masking import mask_text, remember_secret

SECRET_SUFFIXES = ("CONTROL_KEY", "PASSPHRASE", "_SECRET", "_TOKEN")


def remember_environment_secrets(env: Mapping[str, str] | None = None) -> None:
    """The values of the environment's secret variables: masked wherever they show from now on."""
    env = os.environ if env is None else env
    names = {ENV_VARS["control_key"], ENV_VARS["private_key_passphrase"], "GATEKIT_CONTROL_TOKEN"}
    for name, value in env.items():
        if (name in names or name.endswith(SECRET_SUFFIXES)) and value:
            remember_secret(value)


def scrub(report: Any) -> None:
    """Mask the report's traceback and captured sections in place (only when masking changes them)."""
    longrepr = getattr(report, "longrepr", None)
    if longrepr is not None and not isinstance(longrepr, tuple):  # (a skip's longrepr is a (path, line, reason))
        text = str(longrepr)
        masked = mask_text(text)
        if masked != text:
            report.longrepr = masked
    elif isinstance(longrepr, tuple) and len(longrepr) == 3:
        report.longrepr = (longrepr[0], longrepr[1], mask_text(str(longrepr[2])))
    sections = getattr(report, "sections", None)
    if sections:
        report.sections = [(title, mask_text(content)) for title, content in sections]


def scrub_exception(error: BaseException | None) -> None:
    """Mask the exception's message in place, when masking changes it (what Allure shows as the message is the
    exception itself, not the report): its ``args`` become the masked text."""
    if error is None:
        return
    try:
        text = str(error)
    except Exception:  # (an exception whose __str__ fails: nothing to mask by)
        return
    masked = mask_text(text)
    if masked != text:
        error.args = (masked,)
