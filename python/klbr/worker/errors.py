"""The worker's own failures: one base class with a stable ``code``; messages name the value."""

from __future__ import annotations

__all__ = ["WorkerError"]


class WorkerError(Exception):
    """A worker startup or protocol failure; ``code`` is stable (``WORKER_*``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __str__(self) -> str:
        return f"{self.code}: {self.args[0]}"
