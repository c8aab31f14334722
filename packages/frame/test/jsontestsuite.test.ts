// JSONTestSuite's test_parsing/ through the strict decoder: every file's outcome is the one pinned
// in fixtures/jsontestsuite/expected.json (the Python suite reads the same), and the fast path
// agrees with the exhaustive check on each.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodePayload, decodePayloadExhaustively } from "../src/decode";
import { isFrameError } from "../src/errors";

const SUITE = fileURLToPath(new URL("../../../fixtures/jsontestsuite/", import.meta.url));
const { cases } = JSON.parse(readFileSync(`${SUITE}expected.json`, "utf8")) as { cases: { file: string; outcome: string }[] };

function outcome(decode: (b: Uint8Array) => unknown, payload: Uint8Array): string {
  try {
    decode(payload);
    return "ok";
  } catch (error) {
    if (!isFrameError(error)) throw error;
    return error.code;
  }
}

describe("JSONTestSuite", () => {
  it("holds every file of test_parsing/, each with a pinned outcome", () => {
    expect(readdirSync(`${SUITE}test_parsing`).sort()).toEqual(cases.map((c) => c.file));
    expect(cases).toHaveLength(318);
  });

  it.each(cases)("$file: $outcome", ({ file, outcome: want }) => {
    const payload = new Uint8Array(readFileSync(`${SUITE}test_parsing/${file}`));
    expect(outcome(decodePayload, payload)).toBe(want);
    expect(outcome(decodePayloadExhaustively, payload)).toBe(want);
    if (file.startsWith("n_")) expect(want).not.toBe("ok");
    if (file.startsWith("y_") && !file.startsWith("y_object_duplicated_key")) expect(want).toBe("ok");
  });
});
