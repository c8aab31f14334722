import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("public API", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "HEADER_ERROR_CODES",
        "HeaderError",
        "JOINED_SOURCE",
        "NO_NEWLINE_MARKER",
        "OBSERVATION_NOTICE",
        "applyChange",
        "applyPatches",
        "checkActor",
        "checkPatch",
        "checkSources",
        "checkTime",
        "currentTextSupported",
        "describeActor",
        "diffPatches",
        "fold",
        "formatStamp",
        "isDigest",
        "isHeaderError",
        "joinLines",
        "joinSources",
        "observe",
        "parseHeaderPin",
        "parseHeaderRecord",
        "parseHeaderRevision",
        "patchesPerSource",
        "pinAtStart",
        "recordSources",
        "renderObservation",
        "renderPatches",
        "resolve",
        "revise",
        "sha256Hex",
        "sourcesLineUp",
        "splitLines",
        "verifiedChange",
      ]
    `);
  });
});
