"""Emulations of the public client libraries of the gateway family, run against the simulator."""
