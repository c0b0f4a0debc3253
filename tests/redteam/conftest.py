"""The red team that stays (issue 25): each attack an agent, another app, a web page or another
fleet principal could make on what the owner keeps, through the real server and real clients,
each asserting that nothing of the owner's was touched."""
