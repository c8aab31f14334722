"""klbr.manifest against fixtures/digest/manifests.json (the same cases vitest runs)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

sys.dont_write_bytecode = True

from conftest import load_vectors  # noqa: E402
from klbr.digest import ActivationError  # noqa: E402
from klbr.manifest import decode_manifest, parse_manifest, read_manifest  # noqa: E402


def _raw(case: dict) -> bytes:
    data = case["input"]
    return bytes.fromhex(data["hex"]) if "hex" in data else data["json"].encode("utf-8")


@pytest.mark.parametrize("case", load_vectors("digest/manifests.json"), ids=lambda c: c["description"])
def test_manifest_vectors(case):
    if "error" in case:
        with pytest.raises(ActivationError) as caught:
            decode_manifest(_raw(case))
        assert (caught.value.code, caught.value.field) == (case["error"]["code"], case["error"]["field"])
    else:
        manifest = decode_manifest(_raw(case))
        assert manifest.hooks == case["expected"]["hooks"]
        assert manifest.package == case["expected"]["package"]


def test_read_manifest_missing(tmp_path):
    with pytest.raises(ActivationError) as caught:
        read_manifest(tmp_path)
    assert caught.value.code == "MANIFEST_MISSING"
    assert "manifest.json" in str(caught.value)


def test_read_manifest_refuses_a_symlink(tmp_path):
    (tmp_path / "real.json").write_text('{"version":1,"hooks":{"attention.plan":"p:a","delivery.review":"p:d"}}')
    os.symlink("real.json", tmp_path / "manifest.json")
    with pytest.raises(ActivationError) as caught:
        read_manifest(tmp_path)
    assert caught.value.code == "SOURCE_SYMLINK"


def test_read_manifest_refuses_a_fifo_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "manifest.json")
    outcome: list = []

    def read() -> None:
        try:
            read_manifest(tmp_path)
        except ActivationError as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the thread before failing, so the suite does not hang
        with open(os.open(tmp_path / "manifest.json", os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        pytest.fail("read_manifest waited for a writer on a FIFO")
    assert [e.code for e in outcome] == ["SOURCE_NOT_REGULAR"]
    assert outcome[0].path == "manifest.json"


def test_read_manifest_refuses_a_folder(tmp_path):
    (tmp_path / "manifest.json").mkdir()
    with pytest.raises(ActivationError) as caught:
        read_manifest(tmp_path)
    assert caught.value.code == "SOURCE_NOT_REGULAR"


def test_parse_manifest_messages_name_the_field():
    with pytest.raises(ActivationError) as caught:
        parse_manifest({"version": 1, "hooks": {"attention.plan": "p:a", "delivery.review": 3}})
    assert caught.value.field == "hooks.delivery.review"
    assert "hooks.delivery.review" in str(caught.value) and "3" in str(caught.value)
