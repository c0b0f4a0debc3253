"""Built-in action handlers, one module per family, registered through entry points."""
