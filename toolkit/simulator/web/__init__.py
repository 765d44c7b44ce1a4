"""The simulator's web wing: the front door, the gateway routes and their rendering, the limits and
guards, the control API, the payer's pages and the app that holds them.  It imports the rules and storage, never
the other way."""
