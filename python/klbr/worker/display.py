"""Rich display (C20): MIME bundles of the running cell, sent as ``display`` messages.

Only with ``--display`` (the workbench). The shape is IPython's (``core/formatters.py``): one bundle
per object, from ``_repr_mimebundle_()`` when it gives one, else from each ``_repr_*_`` method that
returns something, always with ``text/plain`` (``repr``). A method that raises, or returns what its
type cannot carry (a ``_repr_png_`` that returns text, bytes that are not a PNG), is skipped with one
line on the cell's stderr; the cell goes on. Unlike IPython, nothing is buffered or published
later: each display is one frame, written when it is made, bounded:

* a bundle whose frame would pass 1 MiB is sent as ``text/plain`` (cut to fit when it alone is too
  big) with ``metadata["klbr/omitted"] = {mime: bytes}``: the raw size of each representation left
  out (decoded bytes for images, UTF-8 bytes for text, the bytes cut for a cut ``text/plain``);
* at most 32 displays per cell; the rest are counted (without being formatted; the last value is,
  as only its bundle says whether it is a display) and reported as the completion's ``displays_dropped``.

Displays from the cell's own threads count for it (as its output does); a task an earlier cell
started is not this cell's, and a forked child never sends. Sending holds ``_lock``, which
:meth:`Displays.end` takes too, so no display of a cell follows its ``completed``.

The user's methods run in :func:`_call`, a launcher frame for the interrupt path (``server.py``'s
``in_worker_code``): an interrupt may land in a slow ``savefig``, never in the worker's bookkeeping
or in a half-written frame.

matplotlib (never imported here): :func:`install_matplotlib_hook` puts a finder first on
``sys.meta_path`` that, once the cell imports matplotlib, sets its backend to
``module://klbr.worker.mpl_backend`` before anything else of matplotlib runs (unless the cell set
``MPLBACKEND`` itself). Children the cell starts are not affected, unlike an inherited
``MPLBACKEND``. A figure is shown as ``image/png`` at its own dpi (100 unless it says otherwise)
and closed.
"""

from __future__ import annotations

import binascii
import json
import os
import sys
import threading
from typing import Any, Callable

from klbr.envelope import (
    BINARY_DISPLAY_MIMES,
    DISPLAY_OMITTED_KEY,
    MAX_DISPLAYS_PER_CELL,
    is_encoded_image,
    is_mime_type,
)
from klbr.frame import MAX_FRAME_BYTES, FrameError, encode_payload
from klbr.runtime import current_scope

from .capture import clean_text, cut_utf8, utf8_length

__all__ = [
    "MATPLOTLIB_BACKEND",
    "REPR_METHODS",
    "Displays",
    "bundle",
    "current",
    "has_rich",
    "install_matplotlib_hook",
]

#: The ``_repr_*_`` methods read when an object has no ``_repr_mimebundle_`` (in C20's order).
REPR_METHODS = (
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("image/svg+xml", "_repr_svg_"),
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("text/latex", "_repr_latex_"),
    ("application/json", "_repr_json_"),
)
#: The backend a --display workbench gives matplotlib (``mpl_backend.py``).
MATPLOTLIB_BACKEND = "module://klbr.worker.mpl_backend"

#: The most ``text/plain`` bytes a display past the frame limit keeps (the rest of the frame is the envelope).
_PLAIN_BUDGET = MAX_FRAME_BYTES - 16_384
# Values of these types have no rich representation: no attribute is looked up on them.
_PLAIN_TYPES = frozenset({int, float, complex, str, bytes, bytearray, bool, list, tuple, dict, set, frozenset, range, type(None)})
# IPython's test for proxies that claim every attribute (a Mock): they get no rich representation.
_CANARY = "_klbr_canary_method_that_does_not_exist_"
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _wire_json(value: Any) -> bool:
    """Whether the frame encoder takes ``value`` (C1: finite numbers, safe integers, no lone surrogates, depth)."""
    try:
        encode_payload(value)
    except (FrameError, TypeError, ValueError, RecursionError):
        return False
    return True


def _diagnose(line: str) -> None:
    """One line on the cell's stderr (its capture, when the cell runs)."""
    try:
        sys.stderr.write(f"display: {line}\n")
    except Exception:  # noqa: BLE001 - a cell that broke its stderr still runs
        pass


def _safe_getattr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - a property that raises means "not there"
        return None


def _method(obj: Any, name: str) -> Callable | None:
    """``obj``'s bound formatter method ``name``, or None (classes and proxies have none)."""
    if isinstance(obj, type):
        return None
    method = _safe_getattr(obj, name)
    if not callable(method) or callable(_safe_getattr(obj, _CANARY)):
        return None
    return method


def _call(method: Callable, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    """Call one of the object's own methods: ``(True, value)``, or ``(False, error)`` if it raised.

    A launcher frame (``server._LAUNCHERS``): an interrupt may land in the method it calls.
    KeyboardInterrupt and cancellation are not errors of the method: they end the cell.
    """
    try:
        return True, method(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - a raising formatter is skipped (C20)
        return False, error


def _describe(error: BaseException) -> str:
    try:
        detail = str(error)
    except Exception:  # noqa: BLE001
        detail = "<str() failed>"
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def _type_name(obj: Any) -> str:
    return type(obj).__qualname__


def _plain_text(obj: Any) -> str:
    ok, text = _call(repr, obj)
    if ok and isinstance(text, str):
        return clean_text(text)
    if not ok:
        _diagnose(f"repr() of {_type_name(obj)} raised {_describe(text)}")
    return f"<{_type_name(obj)} object>"


def _is_json_type(mime: str) -> bool:
    return mime == "application/json" or mime.endswith("+json")


def _encode_value(mime: str, value: Any, source: str) -> tuple[str, int] | None:
    """The wire text of one representation and its raw size, or None (skipped, with a stderr line)."""
    if mime in BINARY_DISPLAY_MIMES:
        if isinstance(value, (bytes, bytearray, memoryview)):
            raw = bytes(value)
            text = binascii.b2a_base64(raw, newline=False).decode("ascii")
            if is_encoded_image(mime, text):
                return text, len(raw)
            _diagnose(f"{source} returned bytes that are not {mime}; skipped")
            return None
        if isinstance(value, str) and is_encoded_image(mime, value):
            return value, len(value) // 4 * 3 - value[-2:].count("=")  # base64 already (IPython allows it)
        if isinstance(value, str):
            _diagnose(f"{source} returned a str that is not base64 of {mime}; skipped")
        else:
            _diagnose(f"{source} returned {type(value).__name__}, not bytes; skipped")
        return None
    if isinstance(value, str):
        text = clean_text(value)
        return text, utf8_length(text)
    if _is_json_type(mime) and isinstance(value, (dict, list)):
        try:
            text = _JSON_TEXT(value)
        except (TypeError, ValueError, RecursionError) as error:
            _diagnose(f"{source} returned a value JSON cannot carry ({_describe(error)}); skipped")
            return None
        text = clean_text(text)
        return text, utf8_length(text)
    _diagnose(f"{source} returned {type(value).__name__}, not str; skipped")
    return None


def _split(value: Any) -> tuple[Any, Any]:
    """IPython's ``(data, metadata)`` return of a formatter, or ``(value, None)``."""
    if isinstance(value, tuple) and len(value) == 2:
        return value
    return value, None


def _metadata_of(value: Any, source: str) -> dict:
    """The ``{mime: object}`` entries of a formatter's metadata (others skipped, with a stderr line)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        _diagnose(f"{source} returned metadata of type {type(value).__name__}; ignored")
        return {}
    out = {}
    for key, item in value.items():
        if is_mime_type(key) and not key.startswith("klbr/") and isinstance(item, dict):
            if not _wire_json(item):
                _diagnose(f"{source} metadata for {key} is not wire JSON; ignored")
                continue
            out[key] = item
        else:
            _diagnose(f"{source} metadata key {key!r} is not a MIME type with an object value; ignored")
    return out


def _figure_png(obj: Any) -> tuple[bytes | None, str]:
    """A matplotlib figure as PNG bytes at its own dpi (None if savefig raised); closes it in pyplot."""
    import io

    buffer = io.BytesIO()
    ok, error = _call(obj.savefig, buffer, format="png", dpi="figure")
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        _call(pyplot.close, obj)  # shown figures are closed (C20)
    if not ok:
        _diagnose(f"savefig of {_type_name(obj)} raised {_describe(error)}; skipped")
        return None, ""
    return buffer.getvalue(), f"{_type_name(obj)}.savefig"


def _is_figure(obj: Any) -> bool:
    figure = sys.modules.get("matplotlib.figure")
    return figure is not None and isinstance(obj, getattr(figure, "Figure", ()))


def bundle(obj: Any, plain: str | None = None) -> tuple[dict, dict, dict]:
    """``obj``'s MIME bundle: ``(data, metadata, sizes)``, data always with ``text/plain``.

    ``plain``: the ``text/plain`` when its repr is already made (the last value's). ``sizes`` maps
    each type in ``data`` to its raw size (for ``klbr/omitted``).
    """
    data: dict[str, str] = {}
    sizes: dict[str, int] = {}
    metadata: dict[str, dict] = {}
    name = _type_name(obj)
    if _is_figure(obj):
        png, source = _figure_png(obj)
        if png is not None:
            encoded = _encode_value("image/png", png, source)
            if encoded is not None:
                data["image/png"], sizes["image/png"] = encoded
    else:
        mimebundle = _method(obj, "_repr_mimebundle_")
        given = None
        if mimebundle is not None:
            ok, value = _call(mimebundle, include=None, exclude=None)
            if not ok:
                _diagnose(f"{name}._repr_mimebundle_ raised {_describe(value)}; skipped")
            else:
                given, extra = _split(value)
                if given is not None and not isinstance(given, dict):
                    _diagnose(f"{name}._repr_mimebundle_ returned {type(given).__name__}, not a dict; skipped")
                    given = None
                elif given is not None:
                    metadata.update(_metadata_of(extra, f"{name}._repr_mimebundle_"))
        if given is not None:
            for mime, value in given.items():
                if not is_mime_type(mime) or mime.startswith("klbr/"):
                    _diagnose(f"{name}._repr_mimebundle_ gave {mime!r}, not a MIME type; skipped")
                    continue
                encoded = _encode_value(mime, value, f"{name}._repr_mimebundle_ {mime}")
                if encoded is not None:
                    data[mime], sizes[mime] = encoded
        else:
            for mime, method_name in REPR_METHODS:
                method = _method(obj, method_name)
                if method is None:
                    continue
                source = f"{name}.{method_name}"
                ok, value = _call(method)
                if not ok:
                    _diagnose(f"{source} raised {_describe(value)}; skipped")
                    continue
                value, extra = _split(value)
                if value is None:
                    continue
                encoded = _encode_value(mime, value, source)
                if encoded is not None:
                    data[mime], sizes[mime] = encoded
                    if extra is not None:
                        # IPython: a method's own metadata ({"width": 640}) is its type's.
                        metadata.update(_metadata_of({mime: extra}, source))
    if "text/plain" not in data:
        text = _plain_text(obj) if plain is None else clean_text(plain)
        data = {"text/plain": text, **data}
        sizes["text/plain"] = utf8_length(text)
    return data, metadata, sizes


def has_rich(obj: Any) -> bool:
    """Whether ``obj`` may have a representation besides ``text/plain`` (a cheap test, no calls)."""
    if type(obj) in _PLAIN_TYPES:
        return False
    if _is_figure(obj):
        return True
    if _method(obj, "_repr_mimebundle_") is not None:
        return True
    return any(_method(obj, name) is not None for _, name in REPR_METHODS)


def _user_metadata(metadata: Any) -> dict:
    """``display(..., metadata=...)``: ``{mime: dict}`` JSON, else TypeError/ValueError to the caller."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise TypeError(f"display() metadata must be a dict of MIME type -> dict, not {type(metadata).__name__}")
    for key, item in metadata.items():
        if not is_mime_type(key) or key.startswith("klbr/"):
            raise ValueError(f"display() metadata key {key!r} is not a MIME type (lowercase type/subtype, not klbr/*)")
        if not isinstance(item, dict):
            raise TypeError(f"display() metadata[{key!r}] must be a dict, not {type(item).__name__}")
    if not _wire_json(metadata):
        raise ValueError("display() metadata is not wire JSON (finite numbers, integers within 2**53, no lone surrogates)")
    return metadata


Encode = Callable[[str, int, dict, dict], bytes]
Send = Callable[[bytes], None]


class Displays:
    """One worker's displays: the running cell's count and seq, and its sends (C20).

    ``encode(id, seq, data, metadata)`` builds a ``display`` frame (raising FrameError past 1 MiB);
    ``send(frame)`` writes one whole frame from any thread. ``begin``/``end`` run on the loop thread
    around a cell; :meth:`display` runs on whichever thread the cell called ``display()`` from.
    """

    def __init__(self, encode: Encode, send: Send) -> None:
        self._encode = encode
        self._send = send
        self._lock = threading.Lock()
        self._op: str | None = None
        self._scope: Any = None
        self._seq = 0
        self._dropped = 0
        #: Called before each display is sent (the live output's flush, so output written before a
        #: display is sent before it); None without live output.
        self.before_send: Callable[[], None] | None = None
        os.register_at_fork(after_in_child=self._after_fork_in_child)

    # -- the loop thread ----------------------------------------------------------------

    def begin(self, operation_id: str, scope: Any) -> None:
        """Start the cell ``operation_id`` (its displays count from seq 0)."""
        with self._lock:
            self._op, self._scope, self._seq, self._dropped = operation_id, scope, 0, 0

    def end(self) -> int:
        """Stop the cell (after any display being sent): its ``displays_dropped``."""
        with self._lock:
            dropped = self._dropped
            self._op, self._scope, self._dropped = None, None, 0
        return dropped

    # -- any thread of the cell ----------------------------------------------------------

    def display(self, *objs: Any, metadata: Any = None) -> None:
        """``display(*objs, metadata=None)`` of the cell namespace: show each object now."""
        extra = _user_metadata(metadata)
        for obj in objs:
            self.show(obj, extra)

    def show(self, obj: Any, extra: dict | None = None, plain: str | None = None, rich_only: bool = False) -> None:
        """Send ``obj``'s bundle (``extra`` over its metadata) as the running cell's next display.

        ``plain``: its ``text/plain`` when already known (the last value's repr, made once).
        ``rich_only``: only when the bundle has a type besides ``text/plain`` (the last value: one
        whose formatters all gave None has no rich representation, and its result record says it all).
        """
        operation_id = self._owner()
        if operation_id is None:
            return
        with self._lock:
            if self._op != operation_id:
                return
            if self._seq >= MAX_DISPLAYS_PER_CELL and not rich_only:
                self._dropped += 1  # counted, never formatted: a display loop costs nothing more
                return
        # The last value (once a cell) is formatted even past the bound: only its bundle says
        # whether it is a display at all, so one with nothing rich is not counted as dropped.
        data, metadata, sizes = bundle(obj, plain)
        if rich_only and len(data) == 1:
            return  # text/plain alone (bundle() always gives it)
        if extra:
            metadata.update(extra)
        if self.before_send is not None:
            self.before_send()
        with self._lock:
            if self._op != operation_id:
                return  # the cell ended while its thread formatted this
            if self._seq >= MAX_DISPLAYS_PER_CELL:
                self._dropped += 1
                return
            seq = self._seq
            frame = self._frame(operation_id, seq, data, metadata, sizes)
            self._seq = seq + 1
            self._send(frame)

    def _owner(self) -> str | None:
        """The running cell's id when the caller is that cell (its task, or a thread); else None."""
        operation_id = self._op
        if operation_id is None:
            return None
        scope = current_scope.get()
        # Threads start with an empty context: theirs is the running cell. A task of an earlier cell
        # carries that cell's (ended) scope: not this cell's display.
        if scope is not None and scope is not self._scope:
            return None
        return operation_id

    def _frame(self, operation_id: str, seq: int, data: dict, metadata: dict, sizes: dict) -> bytes:
        """The display's frame; past 1 MiB, ``text/plain`` with ``klbr/omitted`` instead (C20)."""
        try:
            return self._encode(operation_id, seq, data, metadata)
        except FrameError as error:
            if error.code != "FRAME_TOO_LARGE":
                raise
        omitted = {mime: max(size, 1) for mime, size in sizes.items() if mime != "text/plain"}
        text = data["text/plain"]
        full = sizes["text/plain"]
        if full > _PLAIN_BUDGET:
            text = cut_utf8(text, _PLAIN_BUDGET)
        while True:
            cut = full - utf8_length(text)
            fallback = {**omitted, **({"text/plain": cut} if cut else {})}
            try:
                return self._encode(operation_id, seq, {"text/plain": text}, {DISPLAY_OMITTED_KEY: fallback} if fallback else {})
            except FrameError as error:
                if error.code != "FRAME_TOO_LARGE":
                    raise
            # Escaping made it longer than its bytes (control characters are 6 bytes each): cut an eighth more.
            size = utf8_length(text)
            text = cut_utf8(text, size - max(size // 8, 1024))

    def _after_fork_in_child(self) -> None:
        # The child's copy never sends (only the worker's pid writes frames).
        self._op = None
        self._lock = threading.Lock()


class _MatplotlibFinder:
    """Sets matplotlib's backend as the cell first imports it (see the module docstring)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "matplotlib":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _BackendLoader(spec.loader)
        return spec


class _BackendLoader:
    """matplotlib's own loader, then the backend set; the module keeps its own loader afterwards."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        spec = module.__spec__
        if spec is not None:
            spec.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        if os.environ.get("MPLBACKEND"):
            return  # the cell chose a backend itself
        try:
            module.rcParams["backend"] = MATPLOTLIB_BACKEND
            module.rcParamsOrig["backend"] = MATPLOTLIB_BACKEND
        except Exception as error:  # noqa: BLE001 - an unusual matplotlib: its own backend stays
            _diagnose(f"could not set the matplotlib backend: {_describe(error)}")


#: The one finder of this process (installing twice keeps one).
_FINDER = _MatplotlibFinder()


def install_matplotlib_hook() -> None:
    """Make the cell's first ``import matplotlib`` use the display backend (never importing it here)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    if "matplotlib" in sys.modules:  # already imported (a cell ran before the hook): switch it now
        try:
            sys.modules["matplotlib"].use(MATPLOTLIB_BACKEND)
        except Exception as error:  # noqa: BLE001
            _diagnose(f"could not set the matplotlib backend: {_describe(error)}")


#: The running worker's displays, for the matplotlib backend (None outside a --display worker).
current: Displays | None = None
