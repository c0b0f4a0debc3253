"""The command line: `phoneuse-runtime` and its commands, their shared options, doctor and spec.

Each package that has commands of its own (fleet, gateway, memory, mcp, nats, owner) keeps its
`add_parser` beside its code; `main.py` puts them together.
"""
