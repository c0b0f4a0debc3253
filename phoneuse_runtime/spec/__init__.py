"""The contract's text, rendered from the handler models: docs/protocol_spec.md (`document`, which
`phoneuse-runtime spec` prints and the MCP face serves as phoneuse://spec) and the catalogue
`phoneuse-runtime actions` prints (`catalogue`). It sits above every room whose section it quotes
(the gateway, MCP, the fleet, NATS, the screen) and below the composition root, which gives it the
registry `serve` serves; nothing below the root imports it (the MCP face is handed `render_spec`)."""
