"""The shop's feature files, bound the pytest-bdd way."""

from pytest_bdd import scenarios

scenarios("features")
