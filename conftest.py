"""Wires pytest, pytest-bdd and Allure together; the suite's fixtures start the simulator on demand."""

pytest_plugins = ["toolkit.certify.plugin"]
