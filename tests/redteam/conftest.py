"""The red team that stays (issue 25): each attack an agent, another app, a web page, one fleet
principal against another or hostile input tried on what the owner keeps, kept as a test through
the real server and real clients, each asserting that nothing of the owner's was touched."""
