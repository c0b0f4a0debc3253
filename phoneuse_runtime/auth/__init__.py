"""Who may call: bearer tokens (generated, stored 0600, checked against a hash) and the named tokens file."""
