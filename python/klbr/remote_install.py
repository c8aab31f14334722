"""Install the klbr runtime into ``<workdir>/klbr-<digest>`` on a remote machine, only when absent.

The host runs this file's text with ``<python> -c <text> <workdir> <digest>`` over SSH, before the
runtime exists there, so it is self-contained (stdlib only, nothing imported from klbr). It talks
over stdout, one line each:

* ``klbr.install python=<major>.<minor>.<micro>``;
* ``klbr.install present``: the directory is there (its ``.klbr-digest`` names the digest); exit 0;
* ``klbr.install absent``: the host then writes the bundle on stdin, a JSON object
  ``{"files": [{"path": "klbr/...", "data": "<base64>"}]}``; the files are written to a temporary
  directory beside the target, their digest is checked against ``<digest>`` (the source identity
  of the spec: sorted names, each fed as u64BE name length, name, u64BE content length, content),
  and the directory is renamed into place; ``klbr.install installed``; exit 0.

Exit 3 when the interpreter is older than 3.11; exit 2 for anything else, with one
``klbr.install: <CODE>: ...`` line on stderr.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import sys
import tempfile

__all__ = ["MIN_PYTHON", "bundle_digest", "main"]

#: The oldest interpreter the worker runs on.
MIN_PYTHON = (3, 11)
_DIGEST_FILE = ".klbr-digest"
_HEX = set("0123456789abcdef")


class InstallError(Exception):
    """A refused bundle or an unusable work directory; ``code`` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def bundle_digest(files: dict[str, bytes]) -> str:
    """The source identity of ``files`` (name -> bytes)."""
    digest = hashlib.sha256()
    for name in sorted(files, key=lambda n: n.encode("utf-8")):
        raw = name.encode("utf-8")
        digest.update(len(raw).to_bytes(8, "big"))
        digest.update(raw)
        digest.update(len(files[name]).to_bytes(8, "big"))
        digest.update(files[name])
    return digest.hexdigest()


def _safe(path: object) -> str:
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path or "\0" in path:
        raise InstallError("INSTALL_BAD_PATH", f"refused path {path!r}")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts) or parts[0] != "klbr":
        raise InstallError("INSTALL_BAD_PATH", f"refused path {path!r}")
    return path


def read_bundle(data: bytes) -> dict[str, bytes]:
    """Decode a bundle into name -> bytes, refusing any path outside ``klbr/``."""
    try:
        value = json.loads(data)
        files = {_safe(f["path"]): base64.b64decode(f["data"], validate=True) for f in value["files"]}
    except InstallError:
        raise
    except Exception as error:  # malformed JSON, base64 or shape
        raise InstallError("INSTALL_BAD_BUNDLE", f"{type(error).__name__}: {error}") from None
    if not files:
        raise InstallError("INSTALL_BAD_BUNDLE", "the bundle holds no file")
    return files


def install(workdir: str, digest: str, files: dict[str, bytes]) -> str:
    """Write ``files`` to ``<workdir>/klbr-<digest>`` atomically; returns that path."""
    actual = bundle_digest(files)
    if actual != digest:
        raise InstallError("INSTALL_DIGEST_MISMATCH", f"the bundle's digest is {actual}, expected {digest}")
    target = os.path.join(workdir, f"klbr-{digest}")
    temp = tempfile.mkdtemp(prefix=".klbr-tmp-", dir=workdir)
    try:
        for name, content in files.items():
            path = os.path.join(temp, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(content)
        with open(os.path.join(temp, _DIGEST_FILE), "w", encoding="ascii") as handle:
            handle.write(digest)
        try:
            os.rename(temp, target)
        except OSError:
            # Another install of the same digest won the race: its copy is as good as ours.
            if not present(target, digest):
                raise
            shutil.rmtree(temp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return target


def present(target: str, digest: str) -> bool:
    """Whether ``target`` is a complete install of ``digest`` (its digest file is written last)."""
    try:
        with open(os.path.join(target, _DIGEST_FILE), encoding="ascii") as handle:
            return handle.read().strip() == digest
    except OSError:
        return False


def main(argv: list[str]) -> int:
    """``<workdir> <digest>``; see the module documentation for the exchange."""
    out = sys.stdout
    version = sys.version_info
    out.write(f"klbr.install python={version[0]}.{version[1]}.{version[2]}\n")
    out.flush()
    try:
        if tuple(version[:2]) < MIN_PYTHON:
            sys.stderr.write(f"klbr.install: INSTALL_PYTHON_TOO_OLD: {sys.version.split()[0]} < 3.11\n")
            return 3
        if len(argv) != 2:
            raise InstallError("INSTALL_USAGE", "expected <workdir> <digest>")
        workdir, digest = argv
        if len(digest) != 64 or not set(digest) <= _HEX:
            raise InstallError("INSTALL_USAGE", f"digest {digest!r} is not 64 lowercase hex digits")
        os.makedirs(workdir, mode=0o700, exist_ok=True)
        if present(os.path.join(workdir, f"klbr-{digest}"), digest):
            out.write("klbr.install present\n")
            return 0
        out.write("klbr.install absent\n")
        out.flush()
        install(workdir, digest, read_bundle(sys.stdin.buffer.read()))
        out.write("klbr.install installed\n")
        return 0
    except InstallError as error:
        sys.stderr.write(f"klbr.install: {error}\n")
        return 2
    except OSError as error:
        sys.stderr.write(f"klbr.install: INSTALL_IO: {error}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
