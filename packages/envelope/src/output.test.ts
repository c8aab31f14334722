// fixtures/output/: the C16 `output` message and the rules across messages (OutputSequence).
// The Python suite runs the same files (python/tests/test_output_vectors.py).
import { describeExtensionVectors } from "../test/extension-vectors.js";
import { OutputSequence, type SequencedMessage } from "./output-sequence.js";

describeExtensionVectors<SequencedMessage>({
  dir: "output",
  sequence: (negotiated) => new OutputSequence({ negotiated }),
  minErrors: 20,
  sequenceCodes: ["ENVELOPE_OUTPUT_AFTER_COMPLETED", "ENVELOPE_OUTPUT_NOT_NEGOTIATED", "ENVELOPE_OUTPUT_SEQUENCE", "ENVELOPE_OUTPUT_UNKNOWN_OPERATION"],
});
