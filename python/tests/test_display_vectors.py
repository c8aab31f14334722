"""fixtures/display/ through klbr.envelope: the C20 ``display`` message and DisplaySequence.

The vitest suite of @klbr/envelope runs the same files (packages/envelope/src/display.test.ts).
"""

import pytest

from conftest import load_vectors
from extension_vectors import check_files, check_message, check_sequence
from klbr.envelope import DisplaySequence

MESSAGES = load_vectors("display/messages.json")
SEQUENCES = load_vectors("display/sequences.json")


def test_the_files_hold_enough_cases():
    check_files(
        MESSAGES,
        SEQUENCES,
        40,
        {
            "ENVELOPE_DISPLAY_AFTER_COMPLETED",
            "ENVELOPE_DISPLAY_DROPPED",
            "ENVELOPE_DISPLAY_NOT_NEGOTIATED",
            "ENVELOPE_DISPLAY_SEQUENCE",
            "ENVELOPE_DISPLAY_UNKNOWN_OPERATION",
            "ENVELOPE_MISSING_FIELD",
        },
    )


@pytest.mark.parametrize("case", MESSAGES, ids=[case["description"] for case in MESSAGES])
def test_message(case):
    check_message(case)


@pytest.mark.parametrize("case", SEQUENCES, ids=[case["description"] for case in SEQUENCES])
def test_sequence(case):
    check_sequence(case, DisplaySequence)


def test_a_5_mib_png_is_checked_whole():
    import base64

    from klbr.envelope import is_encoded_image

    data = b"\x89PNG\r\n\x1a\n" + b"\x07" * (5 * 1024 * 1024)
    text = base64.b64encode(data).decode("ascii")
    assert is_encoded_image("image/png", text)
    assert not is_encoded_image("image/png", text[:3_000_000] + "*" + text[3_000_001:])
    assert not is_encoded_image("image/gif", text)
