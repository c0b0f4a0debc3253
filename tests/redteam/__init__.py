"""The red team that stays: attacks on what the phone's owner keeps, kept as tests.

A test belongs here when it is an attack: through the real server (the production factory on
port 0, or `serve` as a subprocess) and real clients (grpcio stubs, websockets, the MCP SDK,
nats-py, the CLI), from one of the five places an attack comes from: another app on the phone,
a web page in its browser, the agent itself with a valid token, one fleet principal against
another, and hostile input. Each asserts that nothing of the owner's was touched: the owner's
apps not driven nor brought to the front, no hold answered by anyone but the owner, no secret
read or kept, no pairing or token taken, memory and disk bounded.

Each file is one kind of attack; the table in docs/security.md, "The red team", says how many each
file runs, and test_census.py holds the table to what pytest collects. Run them alone with
`python -m pytest -q tests/redteam`.
"""
