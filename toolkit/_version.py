__version__ = "0.1.0"
# Allure 3 (npm) that makes the HTML report; package.json pins the same (tests/test_init.py checks).
ALLURE_VERSION = "3.18.0"
