// @ts-nocheck
// Edges the other suites left open (each found by a surviving StrykerJS mutant, `pnpm mutate header`).
import { describe, expect, it } from "vitest";
import { resolve } from "./chain.js";
import { applyChange, patchesPerSource, revise, verifiedChange } from "./change.js";
import { isDigest, sha256Hex } from "./digest.js";
import { applyPatches } from "./patch.js";
import { HeaderError, isHeaderError } from "./errors.js";
import { renderObservation } from "./render.js";
import { currentTextSupported, fold, observe, pinAtStart } from "./rules.js";

const host = { origin: "host" };
const fullOf = (revision) => ({ ...revision, change: { form: "full", text: revision.change.text ?? "" } });

describe("resolve at its edges", () => {
  it("an error that is not a HeaderError is not swallowed as a stop: it reaches the caller", () => {
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    const revision = observe([pin], [{ name: "c", text: "b\n" }], host, 2)!;
    const hostile = { ...revision };
    Object.defineProperty(hostile, "digest", { enumerable: true, get: () => { throw new TypeError("a getter that throws"); } });
    expect(() => resolve([pin, hostile])).toThrow(TypeError);
    expect(() => resolve([pin, hostile])).toThrow("a getter that throws");
  });

  it("starts at the last pin: a full revision before it is never applied on top of it", () => {
    const first = pinAtStart([{ name: "c", text: "a\n" }], 1);
    const full = fullOf({ ...observe([first], [{ name: "c", text: "b\n" }], host, 2)!, change: { text: "b\n" } });
    expect(resolve([first, full]).text).toBe("b\n");
    const last = pinAtStart([{ name: "c", text: "z\n" }], 3);
    expect(resolve([first, full, last])).toMatchObject({ text: "z\n", head: 2, index: 2, complete: true, stopped: null });
  });

  it("after a stop, links that are null or carry no change are skipped, never dereferenced", () => {
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    for (const tail of [null, {}, { type: "header_revision" }]) {
      const resolution = resolve([pin, null, tail]);
      expect(resolution).toMatchObject({ text: "a\n", index: 0, complete: false });
      expect(resolution.stopped).toMatchObject({ index: 1, code: "HEADER_INVALID_RECORD" });
    }
  });
});

describe("currentTextSupported without a readable head", () => {
  it("is false for an empty chain and for a chain whose pin does not match its text", () => {
    expect(currentTextSupported([], [])).toBe(false);
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    expect(currentTextSupported([pin], [])).toBe(true);
    expect(currentTextSupported([{ ...pin, text: "b\n" }], [])).toBe(false);
  });
});

describe("applyChange at its edges", () => {
  const y = { form: "full", text: "y\n" };

  it("accepts a well-formed text base and refuses a lone surrogate with HEADER_INVALID_SOURCES", () => {
    expect(applyChange("x\n", y, { digest: sha256Hex("y\n") })).toStrictEqual({ text: "y\n", digest: sha256Hex("y\n"), sources: null });
    expect(() => applyChange("x\ud800", y, { digest: sha256Hex("y\n") })).toThrow(
      expect.objectContaining({ code: "HEADER_INVALID_SOURCES", message: 'base text "x\\ud800" is not well-formed Unicode' }),
    );
  });

  it("patches per source when the target names no sources of its own (the base's names are the target's)", () => {
    const base = [{ name: "a", text: "1\n" }, { name: "b", text: "2\n" }];
    const change = { form: "diff", base_digest: sha256Hex("1\n2\n"), patches: [{ source: "b", start_line: 1, old_lines: ["2\n"], new_lines: ["3\n"] }] };
    const applied = applyChange(base, change, { digest: sha256Hex("1\n3\n") });
    expect(applied).toStrictEqual({ text: "1\n3\n", digest: sha256Hex("1\n3\n"), sources: [{ name: "a", text: "1\n" }, { name: "b", text: "3\n" }] });
  });

  it("a null patch is a HEADER_PATCH_INVALID naming no source, against the joined text and per source", () => {
    const joined = { form: "diff", base_digest: sha256Hex("x\n"), patches: [null] };
    expect(() => applyChange("x\n", joined, { digest: sha256Hex("x\n") })).toThrow(
      expect.objectContaining({ code: "HEADER_PATCH_INVALID", message: "patch source undefined where the joined text is patched as instructions" }),
    );
    const base = [{ name: "a", text: "1\n" }];
    const perSource = { form: "diff", base_digest: sha256Hex("1\n"), patches: [null] };
    expect(() => applyChange(base, perSource, { digest: sha256Hex("1\n"), sources: [{ name: "a", digest: sha256Hex("1\n") }] })).toThrow(
      expect.objectContaining({ code: "HEADER_PATCH_INVALID", message: "patch source undefined is not one of the base sources" }),
    );
  });
});

describe("revise and verifiedChange at their edges", () => {
  it("verifiedChange falls back to the full text on a HeaderError, but lets any other error through", () => {
    const next = [{ name: "c", text: "y\n" }];
    const bad = { form: "diff", base_digest: sha256Hex("not the base"), patches: [] };
    expect(verifiedChange("x\n", bad, next)).toStrictEqual({ form: "full", text: "y\n" });
    const hostile = { form: "diff", base_digest: sha256Hex("x\n") };
    Object.defineProperty(hostile, "patches", { get: () => { throw new TypeError("patches unreadable"); } });
    expect(() => verifiedChange("x\n", hostile, next)).toThrow("patches unreadable");
  });

  it("sources whose names do not line up are diffed as the joined text, not source by source", () => {
    const change = revise([{ name: "a", text: "1\n" }], [{ name: "b", text: "1\n2\n" }]);
    expect(change).toStrictEqual({
      form: "diff",
      base_digest: sha256Hex("1\n"),
      patches: [{ source: "instructions", start_line: 2, old_lines: [], new_lines: ["2\n"] }],
    });
  });

  it("a source whose diff is too long to compute makes the whole change a full text", () => {
    const long = Array.from({ length: 1100 }, (_, i) => `line ${i}\n`).join("");
    const change = revise([{ name: "a", text: "x\n" }, { name: "b", text: "y\n" }], [{ name: "a", text: long }, { name: "b", text: "z\n" }]);
    expect(change).toStrictEqual({ form: "full", text: long + "z\n" });
  });
});

describe("digests and error brands", () => {
  it("isDigest takes exactly 64 lowercase hex characters, as a string", () => {
    const hex = "a".repeat(64);
    expect(isDigest(hex)).toBe(true);
    expect(isDigest("x" + hex)).toBe(false);
    expect(isDigest(hex + "x")).toBe(false);
    expect(isDigest("a".repeat(63))).toBe(false);
    expect(isDigest({ toString: () => hex })).toBe(false);
  });

  it("a HeaderError is named HeaderError and is one by class even with an unlisted code; a look-alike object is not", () => {
    const error = new HeaderError("HEADER_NO_PIN", "m");
    expect(error.name).toBe("HeaderError");
    expect(isHeaderError(new HeaderError("NOT_A_LISTED_CODE", "m"))).toBe(true);
    expect(isHeaderError({ name: "HeaderError", code: "HEADER_NO_PIN", message: "m" })).toBe(false);
    const copy = Object.assign(new Error("m"), { name: "HeaderError", code: "HEADER_NO_PIN" });
    expect(isHeaderError(copy)).toBe(true);
    expect(isHeaderError(Object.assign(new Error("m"), { code: "HEADER_NO_PIN" }))).toBe(false);
    expect(isHeaderError(Object.assign(new Error("m"), { name: "HeaderError", code: "NOT_A_LISTED_CODE" }))).toBe(false);
  });
});

describe("when a diff is worth carrying (at most 1024 line edits)", () => {
  const lines = Array.from({ length: 600 }, (_, i) => `line ${i}\n`);

  it("a long text with one line added is a one-line diff (the cheap bound counts every shared line)", () => {
    const change = revise(lines.join(""), [{ name: "c", text: lines.join("") + "added\n" }]);
    expect(change).toStrictEqual({
      form: "diff",
      base_digest: sha256Hex(lines.join("")),
      patches: [{ source: "instructions", start_line: 601, old_lines: [], new_lines: ["added\n"] }],
    });
  });

  it("the same lines in reverse order share every line but need 1198 edits: the whole text is carried", () => {
    const reversed = [...lines].reverse().join("");
    expect(revise(lines.join(""), [{ name: "c", text: reversed }])).toStrictEqual({ form: "full", text: reversed });
  });
});

describe("applyPatches at the end of its base", () => {
  const insert = (start_line) => [{ source: "s", start_line, old_lines: [], new_lines: ["x\n"] }];

  it("inserts right after the last line (start_line = lines + 1) and refuses one past it", () => {
    expect(applyPatches("a\n", insert(2))).toBe("a\nx\n");
    expect(() => applyPatches("a\n", insert(3))).toThrow(
      expect.objectContaining({ code: "HEADER_PATCH_MISMATCH", message: "patch at s:3 reaches past the 1 lines of its base" }),
    );
  });
});

describe("the rules and rendering at their edges", () => {
  it("pinAtStart and observe name the time field they refuse", () => {
    const sources = [{ name: "c", text: "a\n" }];
    expect(() => pinAtStart(sources, -1)).toThrow(
      expect.objectContaining({ code: "HEADER_INVALID_TIME", message: "pinned_at_ms -1 is not a non-negative integer of milliseconds" }),
    );
    const pin = pinAtStart(sources, 1);
    expect(() => observe([pin], [{ name: "c", text: "b\n" }], host, -1)).toThrow(
      expect.objectContaining({ code: "HEADER_INVALID_TIME", message: "observed_at_ms -1 is not a non-negative integer of milliseconds" }),
    );
  });

  it("a fold over a chain whose pin does not reconstruct is a plain fold (no covered revision made it unreadable)", () => {
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    expect(fold([{ ...pin, text: "b\n" }], [{ name: "c", text: "c\n" }], 5, []).reason).toBe("fold");
  });

  it("renderObservation lets an error that is not a HeaderError through from a hostile base", () => {
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    const revision = observe([pin], [{ name: "c", text: "b\n" }], host, 2)!;
    expect(revision.change.form).toBe("diff");
    const source = { name: "c" };
    Object.defineProperty(source, "text", { enumerable: true, get: () => { throw new TypeError("base unreadable"); } });
    expect(() => renderObservation(revision, [source])).toThrow("base unreadable");
  });
});

describe("patchesPerSource", () => {
  it("is false for a text base, whatever the target names; true when recorded names line up", () => {
    expect(patchesPerSource("x\n")).toBe(false);
    expect(patchesPerSource("ab", [{ name: "a" }, { name: "b" }])).toBe(false);
    const base = [{ name: "a", text: "1\n" }];
    expect(patchesPerSource(base)).toBe(true);
    expect(patchesPerSource(base, [{ name: "a" }])).toBe(true);
    expect(patchesPerSource(base, [{ name: "b" }])).toBe(false);
  });
});
