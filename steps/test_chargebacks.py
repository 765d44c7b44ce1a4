"""Chargebacks forced through the simulator's control API: the order, the callback, what may be returned."""

from pytest_bdd import scenarios

scenarios("../features/chargebacks")
