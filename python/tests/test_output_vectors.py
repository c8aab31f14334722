"""fixtures/output/ through klbr.envelope: the C16 ``output`` message and OutputSequence.

The vitest suite of @klbr/envelope runs the same files (packages/envelope/src/output.test.ts).
"""

import pytest

from conftest import load_vectors
from extension_vectors import check_files, check_message, check_sequence
from klbr.envelope import OutputSequence

MESSAGES = load_vectors("output/messages.json")
SEQUENCES = load_vectors("output/sequences.json")


def test_the_files_hold_enough_cases():
    check_files(
        MESSAGES,
        SEQUENCES,
        20,
        {
            "ENVELOPE_OUTPUT_AFTER_COMPLETED",
            "ENVELOPE_OUTPUT_NOT_NEGOTIATED",
            "ENVELOPE_OUTPUT_SEQUENCE",
            "ENVELOPE_OUTPUT_UNKNOWN_OPERATION",
        },
    )


@pytest.mark.parametrize("case", MESSAGES, ids=[case["description"] for case in MESSAGES])
def test_message(case):
    check_message(case)


@pytest.mark.parametrize("case", SEQUENCES, ids=[case["description"] for case in SEQUENCES])
def test_sequence(case):
    check_sequence(case, OutputSequence)
