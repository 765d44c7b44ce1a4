"""The simulator's rules: the engine (the transactions' state machine), what each operation does, the checks
of a request, the errors it refuses with.  It imports storage, never the web wing."""
