"""Property tests of the source digest: what changes it and what does not."""

from __future__ import annotations

import os
import sys
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

sys.dont_write_bytecode = True

from klbr.digest import digest_entries, scan_source, source_digest  # noqa: E402

_segment = st.text(alphabet=st.sampled_from("abcXYZ019_-.é日\uff61\U0001F600"), min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..") and s != "__pycache__"
)
_name = st.builds(
    lambda parts, stem, ext: "/".join([*parts, stem + ext]),
    st.lists(_segment, max_size=2),
    _segment,
    st.sampled_from([".py", ".json", ".md"]),
)
# Admitted trees: names where no file is also a directory prefix of another.
_trees = st.dictionaries(_name, st.binary(max_size=64), min_size=1, max_size=12).filter(
    lambda t: not any(other.startswith(name + "/") for name in t for other in t)
)


def _write(root: str, tree: dict[str, bytes], order: list[str]) -> None:
    for name in order:
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(tree[name])


@settings(max_examples=60, deadline=None)
@given(_trees, st.randoms(use_true_random=False))
def test_creation_order_does_not_matter_and_disk_equals_memory(tree, rnd):
    order_a = sorted(tree)
    order_b = list(tree)
    rnd.shuffle(order_b)
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        _write(a, tree, order_a)
        _write(b, tree, order_b)
        assert source_digest(a) == source_digest(b) == digest_entries(tree.items())
        assert [f.name.encode() for f in scan_source(a)] == sorted(n.encode() for n in tree)


@settings(max_examples=100, deadline=None)
@given(_trees, st.data())
def test_any_change_changes_the_digest(tree, data):
    base = digest_entries(tree.items())
    name = data.draw(st.sampled_from(sorted(tree)))
    kind = data.draw(st.sampled_from(["byte", "append", "truncate", "rename", "drop", "add"]))
    changed = dict(tree)
    content = tree[name]
    if kind == "byte" and content:
        i = data.draw(st.integers(0, len(content) - 1))
        flip = data.draw(st.integers(1, 255))
        changed[name] = content[:i] + bytes([content[i] ^ flip]) + content[i + 1 :]
    elif kind in ("append", "byte"):
        changed[name] = content + data.draw(st.binary(min_size=1, max_size=4))
    elif kind == "truncate" and content:
        changed[name] = content[:-1]
    elif kind == "rename" or kind == "truncate":
        new = data.draw(_name.filter(lambda n: n not in tree))
        changed[new] = changed.pop(name)
    elif kind == "drop":
        del changed[name]
    else:
        new = data.draw(_name.filter(lambda n: n not in tree))
        changed[new] = data.draw(st.binary(max_size=8))
    assert changed != tree
    assert digest_entries(changed.items()) != base


def test_moving_bytes_between_name_and_content_changes_the_digest():
    # The u64 length framing is what keeps these apart.
    assert digest_entries([("ab.py", b"c")]) != digest_entries([("a.py", b"bc")])
    assert digest_entries([("a.py", b""), ("b.py", b"x")]) != digest_entries([("a.py", b"x"), ("b.py", b"")])
