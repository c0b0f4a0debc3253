"""The red team that stays (issue 25): attacks on what the owner keeps, each through the real
server and real clients, each asserting that nothing of the owner's was touched."""
