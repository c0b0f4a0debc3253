"""NATS for a fleet (issue 20): nats-server as a child process, the JetStream event sink, the
fleet-wide event consumer, and leases in a KV bucket. nats-py is optional (the `nats` extra):
nothing here imports it until a NATS url is configured."""
