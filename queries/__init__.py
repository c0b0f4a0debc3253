"""Built-in query handlers, one module per QueryType, registered through entry points."""
