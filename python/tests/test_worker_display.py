"""C20 rich display: ``python -m klbr.worker --display`` against a fake host, as real processes.

Every message is validated by klbr.envelope as it arrives (the fake host parses each envelope) and
fed to a DisplaySequence, so a display that broke C20 fails the test where it arrives. matplotlib
and Pillow are the real packages (python/requirements-test.txt): the worker itself imports neither.
"""

from __future__ import annotations

import base64
import io
import struct
import time
import zlib

import pytest

from klbr.envelope import MAX_DISPLAYS_PER_CELL, DisplaySequence, make_envelope
from klbr.frame import MAX_FRAME_BYTES, encode_frame
from test_worker_support import GENERATION, SESSION, FakeHost

# Real counterparts, never skipped: both are in python/requirements-test.txt (CI installs it).
import matplotlib  # noqa: E402,F401  (imported here, in the test process, never in the worker)
import PIL.Image as PIL  # noqa: E402


def _png(width: int = 2, height: int = 1) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


# Classes the cells use, defined in the namespace by the first cell of each worker.
PRELUDE = f'''
import base64, struct, zlib
PNG = {_png()!r}
class Rich:
    def __repr__(self): return "Rich()"
    def _repr_png_(self): return PNG
    def _repr_html_(self): return "<b>rich</b>"
    def _repr_markdown_(self): return "**rich**"
    def _repr_latex_(self): return "$r$"
    def _repr_svg_(self): return "<svg/>"
    def _repr_json_(self): return {{"a": [1, 2]}}
class Raises:
    def __repr__(self): return "Raises()"
    def _repr_html_(self): raise ValueError("no html today")
    def _repr_markdown_(self): return "still *here*"
class NotBytes:
    def _repr_png_(self): return "a string, not bytes"
    def _repr_jpeg_(self): return b"not a jpeg"
    def _repr_html_(self): return 42
class Bundle:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {{"text/plain": "Bundle!", "application/vnd.custom+json": {{"k": 1}}, "Bad Key": "x", "klbr/omitted": "x"}}, {{"application/vnd.custom+json": {{"v": 2}}}}
class BundleRaises:
    def __repr__(self): return "BR()"
    def _repr_mimebundle_(self, include=None, exclude=None): raise RuntimeError("bundle broke")
    def _repr_html_(self): return "<i>fallback</i>"
class Big:
    def __init__(self, n): self.n = n
    def __repr__(self): return f"Big({{self.n}})"
    def _repr_png_(self): return b"\\x89PNG\\r\\n\\x1a\\n" + bytes(self.n)
class Controls:
    def __repr__(self): return "\\x01" * 2_000_000
class Surrogate:
    def __repr__(self): return "half \\ud800 pair"
    def _repr_html_(self): return "<b>\\udfff</b>"
class OddBundle:
    def __repr__(self): return "OddBundle()"
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {{"image/png": base64.b64encode(PNG).decode(), "text/html": b"<b>bytes</b>", "image/jpeg": "not base64"}}
class NotADict:
    def __repr__(self): return "NotADict()"
    def _repr_mimebundle_(self, include=None, exclude=None): return ["text/plain"]
class HugeRepr:
    def __repr__(self): return "x" * 3_000_000
    def _repr_html_(self): return "<p>" + "y" * 10 + "</p>"
'''


class Cell:
    """One cell: its displays (checked by DisplaySequence as they arrive) and its result."""

    def __init__(self, host: FakeHost, code: str, sequence: DisplaySequence) -> None:
        self.id = host.new_id()
        message = {"kind": "execute", "id": self.id, "code": code}
        sequence.sent(message)
        host.send(message)
        self.displays: list[dict] = []
        self.outputs: list[dict] = []
        while True:
            received = host.recv(60)
            assert received is not None, f"EOF from the worker: {host.stderr()}"
            sequence.received(received)  # raises on any C20 rule broken across messages
            if received["kind"] == "display":
                assert received["id"] == self.id
                self.displays.append(received)
            elif received["kind"] == "output":
                self.outputs.append(received)
            elif received["kind"] == "completed":
                assert received["id"] == self.id
                self.result = received["result"]
                return
            else:
                raise AssertionError(f"unexpected message {received!r}")

    def text(self, stream: str) -> str:
        return "".join(record["text"] for record in self.result["output"] if record["stream"] == stream)


class Workbench:
    def __init__(self, host: FakeHost, negotiated: bool = True) -> None:
        self.host = host
        self.sequence = DisplaySequence(negotiated)

    def run(self, code: str) -> Cell:
        return Cell(self.host, code, self.sequence)


@pytest.fixture(scope="module")
def bench():
    with FakeHost(extra_args=["--display"]) as host:
        workbench = Workbench(host)
        assert workbench.run(PRELUDE).result["status"] == "ok"
        yield workbench


@pytest.fixture
def fresh():
    with FakeHost(extra_args=["--display"]) as host:
        yield Workbench(host)


def _image(display: dict, mime: str = "image/png"):
    return PIL.open(io.BytesIO(base64.b64decode(display["data"][mime], validate=True)))


def _frame_bytes(message: dict) -> int:
    return len(encode_frame(make_envelope(SESSION, GENERATION, message))) - 4


def test_display_sends_each_objects_bundle_with_text_plain_always(bench):
    cell = bench.run("display(Rich(), 7, 'text')")
    assert cell.result["status"] == "ok" and cell.result["displays_dropped"] == 0
    assert [d["seq"] for d in cell.displays] == [0, 1, 2]
    rich, seven, text = (d["data"] for d in cell.displays)
    assert rich == {
        "text/plain": "Rich()",
        "image/png": base64.b64encode(_png()).decode(),
        "image/svg+xml": "<svg/>",
        "text/html": "<b>rich</b>",
        "text/markdown": "**rich**",
        "text/latex": "$r$",
        "application/json": '{"a":[1,2]}',
    }
    assert seven == {"text/plain": "7"} and text == {"text/plain": "'text'"}
    assert cell.result["output"] == []  # display() writes no output record


def test_the_last_value_is_shown_when_rich_and_keeps_its_result_record(bench):
    cell = bench.run("Rich()")
    assert cell.result["output"] == [{"stream": "result", "text": "Rich()"}]
    assert [d["data"]["text/plain"] for d in cell.displays] == ["Rich()"]
    plain = bench.run("40 + 2")
    assert plain.displays == [] and plain.result["output"] == [{"stream": "result", "text": "42"}]
    assert bench.run("x = Rich()").displays == []  # not a last expression
    assert bench.run("Rich").displays == []  # a class has no rich representation of its own


def test_a_last_value_whose_formatters_all_return_none_is_not_shown(bench):
    # Its methods exist but give nothing (pandas' _repr_latex_ off, a _repr_html_ that declines):
    # it has no rich representation, so only its result record stands; display() still shows it.
    code = (
        "class Declines:\n"
        "    def __repr__(self): return 'Declines()'\n"
        "    def _repr_html_(self): return None\n"
        "    def _repr_png_(self): return None\n"
        "class PlainBundle:\n"
        "    def __repr__(self): return 'PlainBundle()'\n"
        "    def _repr_mimebundle_(self, include=None, exclude=None): return {'text/plain': 'just text'}\n"
    )
    assert bench.run(code).result["status"] == "ok"
    cell = bench.run("Declines()")
    assert cell.displays == [] and cell.result["output"] == [{"stream": "result", "text": "Declines()"}]
    assert bench.run("PlainBundle()").displays == []
    shown = bench.run("display(Declines())")
    assert [d["data"] for d in shown.displays] == [{"text/plain": "Declines()"}]
    # One with something besides text/plain is shown, even when that is all klbr/omitted names.
    assert [d["data"]["text/plain"] for d in bench.run("Big(5 * 1024 * 1024)").displays] == ["Big(5242880)"]


def test_a_raising_repr_method_is_skipped_with_a_stderr_line_and_the_cell_goes_on(bench):
    cell = bench.run("display(Raises())\nprint('after')")
    assert cell.result["status"] == "ok"
    assert cell.displays[0]["data"] == {"text/plain": "Raises()", "text/markdown": "still *here*"}
    assert "display: Raises._repr_html_ raised ValueError: no html today; skipped\n" in cell.text("stderr")
    assert cell.text("stdout") == "after\n"


def test_what_a_type_cannot_carry_is_skipped_non_bytes_png_included(bench):
    cell = bench.run("display(NotBytes())")
    assert cell.result["status"] == "ok"
    assert list(cell.displays[0]["data"]) == ["text/plain"]
    assert bench.run("NotBytes()").displays == []  # as a last value: nothing rich came of it
    stderr = cell.text("stderr")
    assert "NotBytes._repr_png_ returned a str that is not base64 of image/png; skipped" in stderr
    assert "NotBytes._repr_jpeg_ returned bytes that are not image/jpeg; skipped" in stderr
    assert "NotBytes._repr_html_ returned int, not str; skipped" in stderr


def test_repr_mimebundle_wins_its_metadata_kept_bad_keys_skipped(bench):
    cell = bench.run("Bundle()")
    display = cell.displays[0]
    assert display["data"] == {"text/plain": "Bundle!", "application/vnd.custom+json": '{"k":1}'}
    assert display["metadata"] == {"application/vnd.custom+json": {"v": 2}}
    assert "gave 'Bad Key', not a MIME type" in cell.text("stderr")
    fallback = bench.run("BundleRaises()")
    assert fallback.displays[0]["data"] == {"text/plain": "BR()", "text/html": "<i>fallback</i>"}
    assert "BundleRaises._repr_mimebundle_ raised RuntimeError: bundle broke" in fallback.text("stderr")


def test_display_metadata_argument(bench):
    cell = bench.run("display(Rich(), metadata={'image/png': {'width': 2}})")
    assert cell.displays[0]["metadata"] == {"image/png": {"width": 2}}
    bad = bench.run("display(1, metadata={'width': 2})")
    assert bad.result["status"] == "error" and "is not a MIME type" in bad.result["error"]
    assert bad.displays == []
    nan = bench.run("display(1, metadata={'text/plain': {'x': float('nan')}})")
    assert nan.result["status"] == "error" and "wire JSON" in nan.result["error"]


def test_a_5_mib_image_is_sent_as_text_plain_with_klbr_omitted(bench):
    cell = bench.run("Big(5 * 1024 * 1024)")
    (display,) = cell.displays
    assert display["data"] == {"text/plain": "Big(5242880)"}
    assert display["metadata"] == {"klbr/omitted": {"image/png": 5 * 1024 * 1024 + 8}}
    under = bench.run("Big(700_000)")  # 700 KB is 933 KB in base64: still one frame
    assert "image/png" in under.displays[0]["data"]
    assert _frame_bytes(under.displays[0]) <= MAX_FRAME_BYTES


def test_a_text_plain_too_big_for_a_frame_is_cut_and_counted(bench):
    cell = bench.run("display(HugeRepr())")
    (display,) = cell.displays
    text = display["data"]["text/plain"]
    assert set(display["data"]) == {"text/plain"} and set(text) == {"x"}
    omitted = display["metadata"]["klbr/omitted"]
    assert omitted["text/plain"] == 3_000_000 - len(text)
    assert omitted["text/html"] == len("<p>" + "y" * 10 + "</p>")
    assert 900_000 < _frame_bytes(display) <= MAX_FRAME_BYTES


def test_an_escape_heavy_text_plain_is_cut_until_its_frame_fits(bench):
    cell = bench.run("display(Controls())")
    (display,) = cell.displays
    text = display["data"]["text/plain"]
    assert set(text) == {"\x01"} and display["metadata"]["klbr/omitted"] == {"text/plain": 2_000_000 - len(text)}
    assert _frame_bytes(display) <= MAX_FRAME_BYTES


def test_lone_surrogates_are_replaced_and_odd_bundles_keep_what_they_can(bench):
    cell = bench.run("display(Surrogate(), OddBundle(), NotADict())")
    surrogate, odd, not_a_dict = (d["data"] for d in cell.displays)
    assert surrogate == {"text/plain": "half \ufffd pair", "text/html": "<b>\ufffd</b>"}
    assert odd == {"text/plain": "OddBundle()", "image/png": base64.b64encode(_png()).decode()}
    assert not_a_dict == {"text/plain": "NotADict()"}
    stderr = cell.text("stderr")
    assert "OddBundle._repr_mimebundle_ text/html returned bytes, not str; skipped" in stderr
    assert "OddBundle._repr_mimebundle_ image/jpeg returned a str that is not base64 of image/jpeg; skipped" in stderr
    assert "NotADict._repr_mimebundle_ returned list, not a dict; skipped" in stderr


def test_a_thousand_displays_send_32_and_count_the_rest(bench):
    bench.run("class Counted:\n    calls = 0\n    def _repr_html_(self):\n        Counted.calls += 1\n        return '<i>c</i>'")
    cell = bench.run("for i in range(1000):\n    display(Counted())")
    # The 968 past the bound are counted, never formatted: their _repr_html_ never ran.
    assert bench.run("Counted.calls").result["output"] == [{"stream": "result", "text": "32"}]
    assert len(cell.displays) == MAX_DISPLAYS_PER_CELL
    assert cell.result["displays_dropped"] == 1000 - MAX_DISPLAYS_PER_CELL
    assert bench.run("display(1)").result["displays_dropped"] == 0  # each cell counts from 0


def test_exactly_32_displays_drop_none_and_a_last_value_with_nothing_rich_is_not_counted(bench):
    bench.run("class Nothing:\n    def _repr_html_(self): return None\n    def __repr__(self): return 'Nothing()'")
    full = bench.run("for i in range(32):\n    display(i)")
    assert len(full.displays) == 32 and full.result["displays_dropped"] == 0
    # Past the bound, a last value whose formatters all give None is no display (it would not have
    # been shown below the bound either): it is not counted as dropped.
    quiet = bench.run("for i in range(32):\n    display(i)\nNothing()")
    assert len(quiet.displays) == 32 and quiet.result["displays_dropped"] == 0
    rich = bench.run("for i in range(32):\n    display(i)\nRich()")
    assert len(rich.displays) == 32 and rich.result["displays_dropped"] == 1


def test_displays_from_the_cells_threads_count_and_none_arrive_after_its_completion(bench):
    code = (
        "import threading\n"
        "t = threading.Thread(target=lambda: display('from a thread'))\n"
        "t.start(); t.join()\n"
        "late = threading.Event()\n"
        "def later():\n"
        "    import time; time.sleep(0.3); display('too late'); late.set()\n"
        "threading.Thread(target=later, daemon=True).start()"
    )
    cell = bench.run(code)
    assert [d["data"]["text/plain"] for d in cell.displays] == ["'from a thread'"]
    # The thread displays after its cell ended, while no cell runs: nothing is sent. (A thread's
    # display while a later cell runs is that cell's, as its output would be: C16's rule.)
    time.sleep(0.6)
    after = bench.run("assert late.wait(10)\ndisplay('mine')")
    assert [d["data"]["text/plain"] for d in after.displays] == ["'mine'"]


def test_a_task_of_an_earlier_cell_is_not_this_cells_display(bench):
    bench.run("import asyncio\ngo = asyncio.Event()\nasync def bg():\n    await go.wait(); display('stray')\ntask = asyncio.ensure_future(bg())")
    cell = bench.run("go.set()\nawait asyncio.sleep(0.05)\ndisplay('own')")
    assert [d["data"]["text/plain"] for d in cell.displays] == ["'own'"]


def test_pillow_images_come_through_their_own_repr(bench):
    cell = bench.run("from PIL import Image\nImage.new('RGB', (30, 20), 'red')")
    image = _image(cell.displays[0])
    assert image.format == "PNG" and image.size == (30, 20)


def test_matplotlib_show_sends_the_figure_as_png_and_closes_it(fresh):
    first = fresh.run("import sys\n'matplotlib' in sys.modules")
    assert first.result["output"] == [{"stream": "result", "text": "False"}]  # the worker never imports it
    cell = fresh.run(
        "import matplotlib\nimport matplotlib.pyplot as plt\n"
        "plt.plot([1, 3, 2])\nplt.show()\n"
        "print(matplotlib.get_backend(), plt.get_fignums())"
    )
    assert cell.result["status"] == "ok", cell.result
    assert cell.text("stdout") == "module://klbr.worker.mpl_backend []\n"
    (display,) = cell.displays
    assert display["data"]["text/plain"].startswith("<Figure size 640x480")
    image = _image(display)
    assert image.size == (640, 480)  # 6.4 x 4.8 inches at dpi 100
    two = fresh.run("fig, ax = plt.subplots(figsize=(4, 3), dpi=50)\nplt.figure()\nplt.show()")
    assert [_image(d).size for d in two.displays] == [(200, 150), (640, 480)]


def test_a_figure_left_as_the_last_value_is_shown_and_closed(fresh):
    cell = fresh.run("import matplotlib.pyplot as plt\nfig = plt.figure(figsize=(2, 1))\nfig")
    assert cell.result["output"] == [{"stream": "result", "text": "<Figure size 200x100 with 0 Axes>"}]
    assert _image(cell.displays[0]).size == (200, 100)
    assert fresh.run("plt.get_fignums()").result["output"][0]["text"] == "[]"
    assert fresh.run("plt.plot([1])").displays == []  # a list of lines is not a figure (C20: show() or a figure)


def test_the_cell_may_choose_its_own_backend_and_children_inherit_nothing(fresh):
    cell = fresh.run(
        "import os, subprocess, sys\n"
        "child = subprocess.run([sys.executable, '-c', 'import os; print(os.environ.get(\"MPLBACKEND\"))'], capture_output=True, text=True).stdout\n"
        "os.environ['MPLBACKEND'] = 'agg'\n"
        "import matplotlib\n"
        "print(child.strip(), matplotlib.get_backend())"
    )
    assert cell.text("stdout") == "None agg\n"


def test_an_interrupt_lands_in_a_slow_repr_method(fresh):
    fresh.run("import time\nclass Slow:\n    def _repr_html_(self):\n        time.sleep(30)\n        return 'x'")
    cell_id = fresh.host.new_id()
    fresh.sequence.sent({"kind": "execute", "id": cell_id, "code": "Slow()"})
    fresh.host.send({"kind": "execute", "id": cell_id, "code": "Slow()"})
    time.sleep(0.5)
    fresh.host.send({"kind": "interrupt", "id": cell_id})
    # recv raises after 20 s, before the 30 s sleep would end: a reply means the interrupt landed.
    message = fresh.host.recv(20)
    assert message is not None, f"EOF from the worker: {fresh.host.stderr()}"
    fresh.sequence.received(message)
    assert message["kind"] == "completed" and message["result"]["status"] == "interrupted"


def test_live_output_and_displays_together_each_in_order_before_the_completion():
    from klbr.envelope import OutputSequence

    with FakeHost(live_output=True, extra_args=["--display"]) as host:
        bench = Workbench(host)
        live = OutputSequence(True)
        code = "import time\nfor i in range(5):\n    print(i)\n    display(i)\n    time.sleep(0.06)"
        message = {"kind": "execute", "id": "op-live", "code": code}
        live.sent(message)
        bench.sequence.sent(message)
        host.send(message)
        kinds = []
        while True:
            received = host.recv(30)
            live.received(received)
            bench.sequence.received(received)
            kinds.append(received["kind"])
            if received["kind"] == "completed":
                break
        assert kinds.count("display") == 5 and kinds.count("output") >= 1 and kinds[-1] == "completed"
        assert received["result"]["displays_dropped"] == 0


def test_output_written_before_a_display_is_sent_before_it():
    """C16 with C20: the cell's pending live output goes out before each display (never paced behind it)."""
    from klbr.envelope import OutputSequence

    with FakeHost(live_output=True, extra_args=["--display"]) as host:
        bench = Workbench(host)
        live = OutputSequence(True)
        # Partial lines (no newline) linger in the pacer: only the flush before each display sends them first.
        code = "import sys\nfor i in range(4):\n    sys.stdout.write(f'o{i} ')\n    display(i)"
        message = {"kind": "execute", "id": "op-order", "code": code}
        live.sent(message)
        bench.sequence.sent(message)
        host.send(message)
        order = []
        while True:
            received = host.recv(30)
            live.received(received)
            bench.sequence.received(received)
            if received["kind"] == "output":
                order.extend(f"out:{t}" for t in received["text"].split())
            elif received["kind"] == "display":
                order.append(f"display:{received['data']['text/plain']}")
            elif received["kind"] == "completed":
                break
        assert order == [x for i in range(4) for x in (f"out:o{i}", f"display:{i}")]


def test_without_display_the_worker_sends_none_and_display_prints(tmp_path):
    with FakeHost() as host:
        plain = Workbench(host, negotiated=False)
        cell = plain.run("class R:\n    def _repr_html_(self): return '<b>'\n    def __repr__(self): return 'R()'\ndisplay(R(), 5)\nR()")
        assert cell.displays == [] and "displays_dropped" not in cell.result
        assert cell.result["output"] == [{"stream": "stdout", "text": "R()\n5\n"}, {"stream": "result", "text": "R()"}]


def test_display_is_refused_for_the_hooks_role():
    import subprocess
    import sys

    from test_worker_support import PYTHON_DIR

    proc = subprocess.run(
        [sys.executable, "-B", "-m", "klbr.worker", "--socket", "/nonexistent", "--role", "hooks", "--session", "s", "--generation", "g", "--display"],
        env={"PYTHONPATH": str(PYTHON_DIR), "KLBR_WORKER_TOKEN": "t"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1 and "WORKER_DISPLAY_UNEXPECTED" in proc.stderr


def test_an_interrupt_never_cuts_a_display_frame(fresh):
    fresh.run("class Big:\n    def __repr__(self): return 'Big()'\n    def _repr_png_(self): return b'\\x89PNG\\r\\n\\x1a\\n' + bytes(700_000)")
    cell_id = fresh.host.new_id()
    message = {"kind": "execute", "id": cell_id, "code": "while True:\n    display(Big())"}
    fresh.sequence.sent(message)
    fresh.host.send(message)
    shown = 0
    while shown < 3:
        received = fresh.host.recv(30)
        fresh.sequence.received(received)
        shown += received["kind"] == "display"
    fresh.host.send({"kind": "interrupt", "id": cell_id})
    while True:
        received = fresh.host.recv(30)  # every frame decodes and validates: none was cut
        fresh.sequence.received(received)
        if received["kind"] == "completed":
            break
        assert received["kind"] == "display" and "image/png" in received["data"]
    assert received["result"]["status"] == "interrupted"
    assert received["result"]["displays_dropped"] >= 0
    assert fresh.run("display(1)").displays[0]["data"] == {"text/plain": "1"}


def test_a_warm_spare_with_display_shows_once_bound():
    with FakeHost(identity_stdin=True, extra_args=["--display"]) as host:
        host.bind()
        cell = Workbench(host).run("class R:\n    def _repr_html_(self): return '<b>r</b>'\nR()")
        assert cell.displays[0]["data"]["text/html"] == "<b>r</b>"
