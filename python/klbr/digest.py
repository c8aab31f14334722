"""Behaviour source identity: admission and the source digest (mirror of @klbr/activation).

The digest hashes the admitted files sorted by the UTF-8 bytes of their POSIX relative names;
for each file one SHA-256 is fed u64BE(name length), name, u64BE(content length), content.
Admission allows only ``.py``, ``.json`` and ``.md`` regular files, at most 128 files and 2 MiB,
no symlink anywhere in the tree (the root included), no bytecode caches, no empty directories,
and names that are valid UTF-8 without a backslash.

When a tree has several problems the refusal is chosen the same way as in TypeScript: the code
earliest in ``ENTRY_PRECEDENCE`` wins, and among entries with that code the one whose relative
name sorts first by bytes. ``python -m klbr.digest DIR...`` prints one digest per directory.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import struct
import sys
from dataclasses import dataclass
from typing import Iterable, Union

__all__ = [
    "ENTRY_PRECEDENCE",
    "MAX_SOURCE_BYTES",
    "MAX_SOURCE_FILES",
    "MAX_WALK_ENTRIES",
    "SOURCE_EXTENSIONS",
    "ActivationError",
    "SourceFile",
    "digest_entries",
    "is_utf8",
    "scan_source",
    "show_name",
    "source_digest",
    "source_files",
]

#: At most this many files in one behaviour source.
MAX_SOURCE_FILES = 128
#: At most this many content bytes in one source, all files together (2 MiB).
MAX_SOURCE_BYTES = 2 * 1024 * 1024
#: A walk visiting more entries than this stops at once with SOURCE_TOO_MANY_FILES.
MAX_WALK_ENTRIES = 4096
#: The only extensions a behaviour source may hold.
SOURCE_EXTENSIONS = (".py", ".json", ".md")
#: Per-entry refusal codes, highest precedence first (the same list as TypeScript's scan.ts).
ENTRY_PRECEDENCE = (
    "SOURCE_BAD_NAME",
    "SOURCE_SYMLINK",
    "SOURCE_NOT_REGULAR",
    "SOURCE_CACHE",
    "SOURCE_EXTENSION",
    "SOURCE_EMPTY_DIRECTORY",
)

_CACHE_HINT = "run source tests with `python -B` (or PYTHONDONTWRITEBYTECODE=1), or keep caches outside the draft"


class ActivationError(Exception):
    """A refused source, manifest or release; ``code`` is the same string TypeScript uses."""

    def __init__(self, code: str, message: str, path: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.path = path
        self.field = field


@dataclass(frozen=True)
class SourceFile:
    """One admitted file: its POSIX relative name and exact content."""

    name: str
    content: bytes

    @property
    def size(self) -> int:
        """The content length in bytes."""
        return len(self.content)


def is_utf8(raw: bytes) -> bool:
    """True when ``raw`` is well-formed UTF-8."""
    try:
        raw.decode("utf-8", "strict")
    except UnicodeDecodeError:
        return False
    return True


def show_name(raw: bytes) -> str:
    """Name bytes as text; bytes outside well-formed UTF-8 show as ``\\xNN`` (as in TypeScript)."""
    return raw.decode("utf-8", "backslashreplace")


def _name_bytes(name: Union[str, bytes]) -> bytes:
    return name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")


def digest_entries(entries: Iterable[Union[SourceFile, tuple]]) -> str:
    """The source digest of in-memory ``SourceFile``s or ``(name, content)`` pairs (names str or bytes)."""
    pairs = []
    for entry in entries:
        name, content = (entry.name, entry.content) if isinstance(entry, SourceFile) else entry
        pairs.append((_name_bytes(name), bytes(content)))
    pairs.sort(key=lambda pair: pair[0])
    sha = hashlib.sha256()
    previous = None
    for name, content in pairs:
        if name == previous:
            shown = show_name(name)
            raise ActivationError("SOURCE_DUPLICATE_NAME", f"source name {shown!r} appears twice", path=shown)
        previous = name
        sha.update(struct.pack(">Q", len(name)))
        sha.update(name)
        sha.update(struct.pack(">Q", len(content)))
        sha.update(content)
    return sha.hexdigest()


def _finding_message(code: str, shown: str) -> str:
    messages = {
        "SOURCE_BAD_NAME": f"source name {shown!r} is not valid UTF-8 or contains a backslash",
        "SOURCE_SYMLINK": f"source entry {shown!r} is a symbolic link; sources may hold no symlinks",
        "SOURCE_NOT_REGULAR": f"source entry {shown!r} is not a regular file or directory",
        "SOURCE_CACHE": f"source entry {shown!r} is a Python bytecode cache; {_CACHE_HINT}",
        "SOURCE_EXTENSION": f"source file {shown!r} has an extension other than {' '.join(SOURCE_EXTENSIONS)}",
        "SOURCE_EMPTY_DIRECTORY": f"source directory {shown!r} is empty; empty directories are not part of a digest",
    }
    return messages.get(code, f"source entry {shown!r} is refused ({code})")


def _check_root(root: str) -> None:
    try:
        st = os.lstat(root)
    except (FileNotFoundError, NotADirectoryError):
        raise ActivationError("SOURCE_NOT_FOUND", f"source root {root!r} does not exist", path=".") from None
    if stat.S_ISLNK(st.st_mode):
        raise ActivationError("SOURCE_SYMLINK", f"source root {root!r} is a symbolic link; give the real directory", path=".")
    if not stat.S_ISDIR(st.st_mode):
        raise ActivationError("SOURCE_NOT_DIRECTORY", f"source root {root!r} is not a directory", path=".")


def _walk(root: str) -> list[bytes]:
    """Walk without following links; return admissible names, or raise the winning refusal."""
    broot = os.fsencode(root)
    files: list[bytes] = []
    findings: list[tuple[int, bytes, str]] = []
    rank = {code: i for i, code in enumerate(ENTRY_PRECEDENCE)}
    stack = [b""]
    visited = 0
    while stack:
        rel_dir = stack.pop()
        abs_dir = os.path.join(broot, rel_dir) if rel_dir else broot
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError):
            shown = show_name(rel_dir) if rel_dir else "."
            raise ActivationError("SOURCE_NOT_FOUND", f"source directory {shown!r} vanished while it was read", path=shown) from None
        if not entries and rel_dir:
            findings.append((rank["SOURCE_EMPTY_DIRECTORY"], rel_dir, "SOURCE_EMPTY_DIRECTORY"))
        for entry in entries:
            visited += 1
            if visited > MAX_WALK_ENTRIES:
                raise ActivationError(
                    "SOURCE_TOO_MANY_FILES",
                    f"source root {root!r} holds more than {MAX_WALK_ENTRIES} entries "
                    f"(at most {MAX_SOURCE_FILES} files are admitted)",
                    path=".",
                )
            name = entry.name
            rel = rel_dir + b"/" + name if rel_dir else name
            code = None
            if not is_utf8(name) or b"\\" in name:
                code = "SOURCE_BAD_NAME"
            elif entry.is_symlink():
                code = "SOURCE_SYMLINK"
            elif entry.is_dir(follow_symlinks=False):
                if name == b"__pycache__":
                    code = "SOURCE_CACHE"
                else:
                    stack.append(rel)
            elif not entry.is_file(follow_symlinks=False):
                code = "SOURCE_NOT_REGULAR"
            elif name.endswith((b".pyc", b".pyo")):
                code = "SOURCE_CACHE"
            elif not name.decode("utf-8").endswith(SOURCE_EXTENSIONS):
                code = "SOURCE_EXTENSION"
            else:
                files.append(rel)
            if code is not None:
                findings.append((rank[code], rel, code))
    if findings:
        _, rel, code = min(findings)
        shown = show_name(rel)
        raise ActivationError(code, _finding_message(code, shown), path=shown)
    if len(files) > MAX_SOURCE_FILES:
        raise ActivationError(
            "SOURCE_TOO_MANY_FILES",
            f"source root {root!r} holds {len(files)} files; at most {MAX_SOURCE_FILES} are admitted",
            path=".",
        )
    return sorted(files)


def _read_admitted(root: str, rel: bytes, budget: int) -> bytes:
    name = rel.decode("utf-8")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(os.path.join(os.fsencode(root), rel), flags)
    except FileNotFoundError:
        raise ActivationError("SOURCE_NOT_FOUND", f"source file {name!r} vanished while it was read", path=name) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ActivationError("SOURCE_SYMLINK", _finding_message("SOURCE_SYMLINK", name), path=name) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ActivationError("SOURCE_NOT_REGULAR", _finding_message("SOURCE_NOT_REGULAR", name), path=name)
        if st.st_size > budget:
            return b"\0" * (budget + 1)  # over the total either way; do not read it
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def scan_source(root: Union[str, os.PathLike]) -> list[SourceFile]:
    """Admit and read the tree at ``root``: files sorted by name bytes, or raise ActivationError."""
    root = os.fspath(root)
    if isinstance(root, bytes):
        root = os.fsdecode(root)
    # Without trailing slashes: lstat("link/") would follow the link and miss a symlinked root.
    root = os.path.abspath(root)
    _check_root(root)
    out: list[SourceFile] = []
    total = 0
    for rel in _walk(root):
        content = _read_admitted(root, rel, MAX_SOURCE_BYTES - total)
        total += len(content)
        if total > MAX_SOURCE_BYTES:
            raise ActivationError(
                "SOURCE_TOO_LARGE",
                f"source root {root!r} holds more than {MAX_SOURCE_BYTES} bytes (2 MiB) of files",
                path=".",
            )
        out.append(SourceFile(rel.decode("utf-8"), content))
    return out


def source_files(root: Union[str, os.PathLike]) -> tuple[str, list[dict]]:
    """The digest of the tree at ``root`` and its files as ``[{"name", "size"}]`` in digest order."""
    files = scan_source(root)
    return digest_entries(files), [{"name": f.name, "size": f.size} for f in files]


def source_digest(root: Union[str, os.PathLike]) -> str:
    """The source digest of the admitted tree at ``root`` (64 lowercase hex characters)."""
    return digest_entries(scan_source(root))


def _main(argv: list[str]) -> int:
    status = 0
    for root in argv:
        try:
            print(f"{source_digest(root)}  {root}")
        except ActivationError as error:
            print(f"{error.code}  {root}: {error}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
