"""Modules the worker's event loop drags in that most cells never use, loaded on first use instead.

``asyncio`` imports ``ssl`` (and with it OpenSSL: libcrypto, its error strings, ``ssl``'s enums),
about 6 MiB of every worker's resident memory, only to name the TLS classes in code paths a cell
reaches when it opens a TLS connection. :func:`defer_ssl`, called before the worker imports
``asyncio``, puts stand-ins for ``ssl`` and ``asyncio.sslproto`` in :data:`sys.modules`: each is
the real module object, empty but for its import metadata, which executes the module's code the
first time an attribute it lacks is read (``import ssl`` itself reads only ``__spec__``), under a
lock, so a second thread waits for the first one's load instead of seeing half a module. From
then on it is an ordinary module.

:mod:`importlib.util`'s LazyLoader does not do for this: it loads on any attribute, and the
import statement reads ``__spec__``, so the next ``import ssl`` (asyncio's own) would load it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
import types

__all__ = ["defer_ssl"]

_LOCK = threading.RLock()


class _Deferred(types.ModuleType):
    """A module whose code runs when an attribute it does not have yet is first read."""

    def __getattr__(self, name: str):
        # Only called for attributes the module's dict lacks.
        _load(self)
        if type(self) is _Deferred:
            # Read by the module's own code while it runs (a circular import): not there yet.
            raise AttributeError(f"partially initialized module {self.__name__!r} has no attribute {name!r}")
        return getattr(self, name)

    def __dir__(self):
        # dir() lists what the module defines, as it would have once imported.
        _load(self)
        return dir(self) if type(self) is not _Deferred else list(self.__dict__)


def _load(module: _Deferred) -> None:
    """Run the module's code once (a second thread waits for the first); it is then an ordinary module."""
    with _LOCK:
        if type(module) is not _Deferred or module.__dict__.get("_klbr_loading", False):
            return
        module.__dict__["_klbr_loading"] = True
        try:
            module.__spec__.loader.exec_module(module)
        except BaseException:
            # As a failed import: the name is not left half-made in sys.modules.
            if sys.modules.get(module.__name__) is module:
                del sys.modules[module.__name__]
            raise
        finally:
            module.__dict__.pop("_klbr_loading", None)
        module.__class__ = types.ModuleType


def _defer(name: str, spec: importlib.machinery.ModuleSpec | None) -> types.ModuleType | None:
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _Deferred
    sys.modules[name] = module
    return module


def defer_ssl() -> bool:
    """Defer ``ssl`` and ``asyncio.sslproto`` (before ``asyncio`` is imported); False when that is too late or not possible."""
    if "ssl" in sys.modules or "asyncio" in sys.modules:
        return False
    asyncio_spec = importlib.util.find_spec("asyncio")
    if asyncio_spec is None or not asyncio_spec.submodule_search_locations:
        return False
    proto_spec = importlib.machinery.PathFinder.find_spec("asyncio.sslproto", list(asyncio_spec.submodule_search_locations))
    ssl_spec = importlib.util.find_spec("ssl")
    if proto_spec is None or ssl_spec is None:
        return False
    _defer("ssl", ssl_spec)
    proto = _defer("asyncio.sslproto", proto_spec)
    import asyncio

    # An import found in sys.modules does not bind the submodule on its package: as a load would have.
    asyncio.sslproto = proto
    return True
