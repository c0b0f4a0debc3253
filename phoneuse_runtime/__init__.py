"""phoneuse-runtime: lets an AI agent use an Android phone safely over gRPC."""

__version__ = "0.1.0"
