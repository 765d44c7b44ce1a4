"""The subcommands of ``gatekit``: one module each, exposing ``register(subparsers)``.

``toolkit.cli.COMMANDS`` lists the module names; ``common`` holds what several of them share.
"""
