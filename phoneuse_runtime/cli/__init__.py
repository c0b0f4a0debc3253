"""The command line: `phoneuse-runtime` and its commands, their shared options, doctor and spec.

The commands of the other rooms live here too (`pair`, `approvals`, `memory`, `fleet`, `events`,
serve's NATS options), each with its `add_parser`, so nothing below imports the command line; `main.py`
puts them together.
"""
