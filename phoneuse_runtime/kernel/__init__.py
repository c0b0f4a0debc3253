"""The kernel: a call from its arrival to its answer, with no front end and no backend in it.

The runtime (execute, query, subscribe), the registry of handlers and what components add, the
context a handler is given, the caller, the policy chain, idempotent replay, turns on the phone,
the error tree, the limits, the event bus, typed params and capabilities. Nothing here imports a
front end (rpc, gateway, mcp), a backend (device/*), the owner's rooms or the command line.
"""
