"""The HTML report opens offline: Allure 3 writes Google Analytics into it, and gatekit takes it out again.

Allure 3's report plugins (``awesome``, the one gatekit's ``allurerc.mjs`` uses, and ``classic`` and
``dashboard``) put Google's gtag.js (``https://www.googletagmanager.com/gtag/js``) and a ``gtag('config', ...)``
call carrying Allure's version and the report's id into every ``index.html`` they write: opening the
self-contained report asks an outside host for a script and tells it of the visit.  Allure 3.18 has no option
that leaves it out (these plugins fix ``analyticsEnable`` to true; ``ALLURE_NO_ANALYTICS=true``, which gatekit
sets too, is read by the ``allure2`` plugin only), so ``strip_analytics`` removes the two script tags from the
report's HTML files once ``allure generate`` has written them.  Nothing else changes: the run's data (a
merchant's URLs in attachments and links among it) is kept as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

# gtag.js, then the inline script that configures it (Allure's template writes them one after the other)
_GTAG = re.compile(
    r"[ \t]*<script async src=\"https://www\.googletagmanager\.com/gtag/js\?id=[^\"]*\"></script>\s*"
    r"<script>(?:(?!</script>).)*?gtag\('config'(?:(?!</script>).)*</script>[ \t]*\n?",
    re.DOTALL,
)
NO_ANALYTICS_ENV = {"ALLURE_NO_ANALYTICS": "true"}


def strip_analytics(report: Path) -> list[Path]:
    """Take Allure's analytics out of every HTML file under ``report``; the files that had them."""
    changed = []
    for path in sorted(report.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        stripped = _GTAG.sub("", text)
        if stripped != text:
            path.write_text(stripped, encoding="utf-8")
            changed.append(path)
    return changed
