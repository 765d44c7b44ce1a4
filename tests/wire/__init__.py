"""Wire tests written from the gateway's documentation alone: they never read gatekit's catalogue."""
