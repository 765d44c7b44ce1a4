"""The certification suite's machinery: targets (simulator or sandbox), Allure wiring, progress, runner."""
