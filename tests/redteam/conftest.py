"""The red team that stays (issue 25): each attack on what the owner keeps, through the real
server and real clients, asserting that nothing of the owner's was touched."""
