"""klbr runtime: the Python side of the worker protocol (stdlib only)."""

from ._version import PROTOCOL_VERSION, __version__

__all__ = ["PROTOCOL_VERSION", "__version__"]
