"""The klbr worker runtime: ``python -m klbr.worker --socket PATH --role workbench|hooks ...``.

Modules: ``main`` (command line, startup), ``server`` (the loop serving one connection),
``connection`` (reader thread, serialized writes), ``cells`` (compiling and running cells),
``capture`` (bounded output), ``hooks_role`` (behaviour sources), ``reaper`` (process tree),
``errors``.
"""

from .errors import WorkerError

__all__ = ["WorkerError"]
