"""The gRPC face of the runtime: server assembly, auth, and the AndroidRuntime servicer."""
