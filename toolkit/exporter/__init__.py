"""The Gherkin exporter: what was done in the explorer (``records``), written as a scenario of the suite.

    from toolkit.exporter import export_feature
    text = export_feature(model.history, scenario="A sale, then a return")

``records`` holds what was done (``Tracked`` orders and ``Action`` steps); ``gherkin`` writes Gherkin with the
suite's phrases (``phrases``), and ``feature`` puts a feature file together.  Nothing here imports the
explorer: it writes the records, this package reads them.
"""

from toolkit.exporter.feature import export_feature, scenario_name
from toolkit.exporter.gherkin import ExportError, stable_text
from toolkit.exporter.records import Action, Tracked

__all__ = ["Action", "ExportError", "Tracked", "export_feature", "scenario_name", "stable_text"]
