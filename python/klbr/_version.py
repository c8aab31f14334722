"""Package and wire protocol versions."""

__all__ = ["PROTOCOL_VERSION", "__version__"]

__version__ = "0.1.0"
#: The `version` field every envelope carries (runtime protocol v1).
PROTOCOL_VERSION = 1
