"""The hooks role: loading a behaviour source and answering ``invoke``.

Import rule for a source root (a release lives at ``releases/<digest>``, so the directory name is
not the import name): the root directory *is* the manifest's top-level package. The worker
registers a package module under that name whose search path is exactly the root (executing the
root's ``__init__.py`` when there is one), so ``klbr_hooks.defaults:attention`` resolves to
``<root>/defaults.py`` whatever the directory is called, and an installed package of the same
name is shadowed. The source digest is computed before anything is imported, and bytecode
writing is turned off, so importing never adds caches to an immutable release.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

from klbr.digest import source_digest
from klbr.manifest import read_manifest
from klbr.sdk import SLOTS, HookContext, request_from_wire

from .errors import WorkerError

__all__ = ["HookSource", "call_handler", "load_source"]


@dataclass(frozen=True)
class HookSource:
    """A loaded behaviour source: its digest and one checked handler per slot."""

    root: str
    revision: str
    handlers: dict[str, Callable[..., Any]]
    entrypoints: dict[str, str]


def _register_package(name: str, root: str) -> None:
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    init = os.path.join(root, "__init__.py")
    if os.path.isfile(init):
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[root])
    else:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [root]
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _check_signature(entry: str, handler: Any) -> None:
    if not callable(handler):
        raise WorkerError("WORKER_SOURCE_ENTRYPOINT", f"{entry} is not callable ({type(handler).__name__})")
    try:
        inspect.signature(handler).bind(None, None)
    except TypeError as error:
        raise WorkerError("WORKER_SOURCE_SIGNATURE", f"{entry} cannot be called as (request, context): {error}") from None
    except ValueError:
        pass  # no introspectable signature (a builtin): trusted as callable


def load_source(root: str | os.PathLike[str]) -> HookSource:
    """Digest, then import the manifest's entrypoints of the source at ``root``; raises WorkerError."""
    root = os.path.abspath(os.fspath(root))
    try:
        revision = source_digest(root)
        manifest = read_manifest(root)
    except Exception as error:  # ActivationError and OSError name the offending file
        code = getattr(error, "code", "WORKER_SOURCE_INVALID")
        raise WorkerError("WORKER_SOURCE_INVALID", f"{root}: {code}: {error}") from None
    sys.dont_write_bytecode = True
    try:
        _register_package(manifest.package, root)
    except Exception as error:
        raise WorkerError("WORKER_SOURCE_IMPORT", f"{manifest.package} ({root}): {type(error).__name__}: {error}") from None
    handlers: dict[str, Callable[..., Any]] = {}
    for slot in SLOTS:
        module_name, attribute = manifest.entrypoint(slot)
        entry = manifest.hooks[slot]
        try:
            module = importlib.import_module(module_name)
        except Exception as error:
            raise WorkerError("WORKER_SOURCE_IMPORT", f"{entry}: {type(error).__name__}: {error}") from None
        try:
            handler = getattr(module, attribute)
        except AttributeError:
            raise WorkerError("WORKER_SOURCE_ENTRYPOINT", f"{entry}: module {module_name} has no attribute {attribute!r}") from None
        _check_signature(entry, handler)
        handlers[slot] = handler
    return HookSource(root, revision, handlers, dict(manifest.hooks))


async def call_handler(source: HookSource, slot: str, data: dict, operation_id: str) -> Any:
    """Call ``slot``'s handler with the typed request built from ``data``; returns its decision.

    Awaits the result when the handler is asynchronous; raises whatever the handler raises.
    """
    request = request_from_wire(slot, data)
    decision = source.handlers[slot](request, HookContext(slot, source.revision, operation_id))
    if inspect.isawaitable(decision):
        decision = await decision
    return decision
