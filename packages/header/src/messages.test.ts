// Every refusal names what it refused: the exact message of each error, beside its stable code.
import { beforeEach, describe as group, expect, it } from "vitest";
import { applyChange } from "./change.js";
import { resolve } from "./chain.js";
import { sha256Hex } from "./digest.js";
import { describe, type HeaderErrorCode } from "./errors.js";
import { applyPatches, checkPatch } from "./patch.js";
import { checkActor, checkTime, parseHeaderPin, parseHeaderRecord, parseHeaderRevision } from "./records.js";
import { formatStamp, renderObservation } from "./render.js";
import { observe } from "./rules.js";
import { checkSources } from "./sources.js";
import type { Change, HeaderRevision } from "./types.js";

const q = (value: string): string => JSON.stringify(value);

/** Runs `fn` and returns the HeaderError's code and message. */
function refusal(fn: () => unknown): { code: HeaderErrorCode; message: string } {
  try {
    fn();
  } catch (error) {
    const { code, message } = error as { code: HeaderErrorCode; message: string };
    return { code, message };
  }
  throw new Error("expected a refusal");
}

const PATCH = { source: "s", start_line: 1, old_lines: [] as string[], new_lines: ["x\n"] };
const pinOf = (text: string) => ({ type: "header_pin", digest: sha256Hex(text), text, reason: "session_start", pinned_at_ms: 0 });
const HOST = { origin: "host" };

function revisionOf(change: unknown, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "header_revision",
    digest: sha256Hex(text),
    change,
    sources: [{ name: "a", digest: sha256Hex(text), text }],
    actor: HOST,
    observed_at_ms: 0,
    ...extra,
  };
}

group("describe", () => {
  it("keeps an 80-character rendering and cuts an 81-character one to 77 and an ellipsis", () => {
    const exactly = "a".repeat(78);
    expect(describe(exactly)).toBe(q(exactly));
    const over = "b".repeat(79);
    expect(describe(over)).toBe(`"${"b".repeat(76)}...`);
    expect(describe(over)).toHaveLength(80);
  });

  it("renders undefined, bigints and cycles without throwing", () => {
    expect(describe(undefined)).toBe("undefined");
    expect(describe(5n)).toBe("5");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(describe(cycle)).toBe("[object Object]");
    expect(describe({ a: 1 })).toBe('{"a":1}');
  });
});

group("checkSources refusals", () => {
  it.each([
    ["x", 'sources must be an array, got "x"'],
    [[{ name: "a", text: "" }, 5], "source 1 is not an object: 5"],
    [[null], "source 0 is not an object: null"],
    [[{ name: "", text: "" }], 'source 0 has an invalid name ""'],
    [[{ name: 7, text: "" }], "source 0 has an invalid name 7"],
    [[{ name: "a", text: "" }, { name: "a", text: "" }], 'source name "a" appears twice'],
    [[{ name: "a", text: 5 }], 'source "a" has an invalid text 5'],
    [[{ name: "a", text: "\uD800" }], `source "a" has an invalid text ${q("\uD800")}`],
  ])("%j", (sources, message) => {
    expect(refusal(() => checkSources(sources as never))).toEqual({ code: "HEADER_INVALID_SOURCES", message });
  });
});

group("checkPatch refusals", () => {
  it.each([
    [null, "a patch must be an object, got null"],
    [[], "a patch must be an object, got []"],
    ["p", 'a patch must be an object, got "p"'],
    [{ source: "s" }, 'a patch has the fields source, start_line, old_lines, new_lines; got "source"'],
    [{ ...PATCH, source: "" }, 'patch source "" is not a name'],
    [{ ...PATCH, source: 5 }, "patch source 5 is not a name"],
    [{ ...PATCH, start_line: 0 }, "patch start_line 0 is not a line number (1-based)"],
    [{ ...PATCH, start_line: 1.5 }, "patch start_line 1.5 is not a line number (1-based)"],
    [{ ...PATCH, start_line: "1" }, 'patch start_line "1" is not a line number (1-based)'],
    [{ ...PATCH, old_lines: "x" }, 'patch old_lines must be an array, got "x"'],
    [{ ...PATCH, new_lines: null }, "patch new_lines must be an array, got null"],
    [{ ...PATCH, new_lines: ["a\n", "b\nc"] }, `patch new_lines[1] is ${q("b\nc")}, which is not one line`],
    [{ ...PATCH, old_lines: [""] }, 'patch old_lines[0] is "", which is not one line'],
    [{ ...PATCH, new_lines: ["a\n\n"] }, `patch new_lines[0] is ${q("a\n\n")}, which is not one line`],
    [{ ...PATCH, new_lines: [5] }, "patch new_lines[0] is 5, which is not one line"],
    [{ ...PATCH, start_line: 3, new_lines: [] }, "patch at s:3 changes nothing"],
  ])("%j", (patch, message) => {
    expect(refusal(() => checkPatch(patch))).toEqual({ code: "HEADER_PATCH_INVALID", message });
  });

  it("accepts line 1, a lone newline, and a last line without one", () => {
    expect(checkPatch({ ...PATCH, new_lines: ["\n", "end"] })).toEqual({ ...PATCH, new_lines: ["\n", "end"] });
  });
});

group("applyPatches at its edges", () => {
  const at = (start_line: number, old_lines: string[], new_lines: string[]) => ({ source: "s", start_line, old_lines, new_lines });

  it("two insertions at the same line both apply, in order", () => {
    expect(applyPatches("a\nb\n", [at(2, [], ["x\n"]), at(2, [], ["y\n"])])).toBe("a\nx\ny\nb\n");
  });

  it("a patch starting inside the one before is refused", () => {
    expect(refusal(() => applyPatches("a\nb\nc\n", [at(1, ["a\n", "b\n"], []), at(2, [], ["x\n"])]))).toEqual({
      code: "HEADER_PATCH_INVALID",
      message: "patch at s:2 overlaps or precedes the patch before it",
    });
  });

  it("an insertion may go just after the last line, not one further", () => {
    expect(applyPatches("a\n", [at(2, [], ["b\n"])])).toBe("a\nb\n");
    expect(refusal(() => applyPatches("a\n", [at(3, [], ["b\n"])]))).toEqual({
      code: "HEADER_PATCH_MISMATCH",
      message: "patch at s:3 reaches past the 1 lines of its base",
    });
  });

  it("old lines may reach the last line, not past it", () => {
    expect(applyPatches("a\nb\n", [at(2, ["b\n"], [])])).toBe("a\n");
    expect(refusal(() => applyPatches("a\nb\n", [at(2, ["b\n", "c\n"], [])]))).toEqual({
      code: "HEADER_PATCH_MISMATCH",
      message: "patch at s:2 reaches past the 2 lines of its base",
    });
  });

  it("names the expected and the found line", () => {
    expect(refusal(() => applyPatches("a\nb\n", [at(1, ["a\n", "x\n"], [])]))).toEqual({
      code: "HEADER_PATCH_MISMATCH",
      message: `patch at s:1 expects ${q("x\n")} at line 2, base has ${q("b\n")}`,
    });
  });
});

group("applyChange refusals", () => {
  const d = (text: string) => sha256Hex(text);
  const diff = (patches: unknown, base = "x\n"): Change => ({ form: "diff", base_digest: d(base), patches }) as Change;
  const replace = (source: string) => ({ source, start_line: 1, old_lines: ["x\n"], new_lines: ["y\n"] });

  it.each<[string, () => unknown, HeaderErrorCode, string]>([
    ["a base text with a lone surrogate", () => applyChange("\uDC00", { form: "full", text: "" }, { digest: d("") }), "HEADER_INVALID_SOURCES", `base text ${q("\uDC00")} is not well-formed Unicode`],
    ["a target digest that is not one", () => applyChange("", { form: "full", text: "" }, { digest: "x" }), "HEADER_INVALID_RECORD", 'target digest "x" is not a SHA-256 hex digest'],
    ["a full text with a lone surrogate", () => applyChange("", { form: "full", text: "\uD800" }, { digest: d("") }), "HEADER_INVALID_RECORD", `full change text ${q("\uD800")} is not well-formed Unicode`],
    ["a full text of another digest", () => applyChange("", { form: "full", text: "b" }, { digest: d("c") }), "HEADER_RESULT_MISMATCH", `full text has digest ${d("b")}, the revision says ${d("c")}`],
    ["an unknown form", () => applyChange("", { form: "patch" } as never, { digest: d("") }), "HEADER_INVALID_RECORD", 'change form "patch" is neither diff nor full'],
    ["a diff against another base", () => applyChange("x\n", diff([], "z\n"), { digest: d("x\n") }), "HEADER_BASE_MISMATCH", `change is against ${q(d("z\n"))}, the base text is ${d("x\n")}`],
    ["patches that are not an array", () => applyChange("x\n", diff("p"), { digest: d("x\n") }), "HEADER_PATCH_INVALID", 'change patches "p" is not an array'],
    ["a named source patching the joined text", () => applyChange("x\n", diff([replace("a")]), { digest: d("y\n") }), "HEADER_PATCH_INVALID", 'patch source "a" where the joined text is patched as instructions'],
    ["a patched text of another digest", () => applyChange("x\n", diff([replace("instructions")]), { digest: d("q") }), "HEADER_RESULT_MISMATCH", `patched text has digest ${d("y\n")}, the revision says ${d("q")}`],
    [
      "a patched source of another digest",
      () => applyChange([{ name: "a", text: "x\n" }], diff([replace("a")]), { digest: d("y\n"), sources: [{ name: "a", digest: d("z") }] }),
      "HEADER_SOURCE_MISMATCH",
      `patched source "a" does not have its recorded digest ${d("z")}`,
    ],
    [
      "a patch for a source the base lacks",
      () => applyChange([{ name: "a", text: "x\n" }], diff([replace("b")]), { digest: d("y\n") }),
      "HEADER_PATCH_INVALID",
      'patch source "b" is not one of the base sources',
    ],
    [
      "patches out of source order",
      () =>
        applyChange([{ name: "a", text: "x\n" }, { name: "b", text: "x\n" }], diff([replace("b"), replace("a")], "x\nx\n"), { digest: d("y\ny\n") }),
      "HEADER_PATCH_INVALID",
      'patch for "a" comes after a patch for a later source',
    ],
  ])("%s", (_what, fn, code, message) => {
    expect(refusal(fn)).toEqual({ code, message });
  });

  it("patches sources in order, and a source's own digest is checked only when recorded", () => {
    const base = [{ name: "a", text: "x\n" }, { name: "b", text: "x\n" }];
    const applied = applyChange(base, diff([replace("a"), replace("b")], "x\nx\n"), { digest: d("y\ny\n"), sources: [{ name: "a" }, { name: "b", digest: d("y\n") }] });
    expect(applied).toEqual({ text: "y\ny\n", digest: d("y\ny\n"), sources: [{ name: "a", text: "y\n" }, { name: "b", text: "y\n" }] });
  });
});

group("record refusals", () => {
  // Built per test, not at collection (where Stryker would count sha256Hex's mutants as static).
  let pin: ReturnType<typeof pinOf>;
  beforeEach(() => {
    pin = pinOf("t");
  });
  it.each<[string, () => unknown, HeaderErrorCode, string]>([
    ["not a record", () => parseHeaderRecord(5), "HEADER_INVALID_RECORD", "record type undefined is neither header_pin nor header_revision"],
    ["null", () => parseHeaderRecord(null), "HEADER_INVALID_RECORD", "record type undefined is neither header_pin nor header_revision"],
    ["a pin that is an array", () => parseHeaderPin([]), "HEADER_INVALID_RECORD", "header_pin must be an object, got []"],
    ["a pin with an extra field", () => parseHeaderPin({ ...pin, extra: 1 }), "HEADER_INVALID_RECORD", 'header_pin has an unknown field "extra"'],
    ["a pin without its time", () => parseHeaderPin({ ...pin, pinned_at_ms: undefined }), "HEADER_INVALID_RECORD", 'header_pin lacks the field "pinned_at_ms"'],
    ["a pin typed as a revision", () => parseHeaderPin({ ...pin, type: "header_revision" }), "HEADER_INVALID_RECORD", 'record type "header_revision" is not header_pin'],
    ["a pin reason", () => parseHeaderPin({ ...pin, reason: "x" }), "HEADER_INVALID_RECORD", 'pin reason "x" is not one of session_start, fold, fold_covered_revision'],
    ["a pin digest", () => parseHeaderPin({ ...pin, digest: "ABC" }), "HEADER_INVALID_RECORD", 'pin digest "ABC" is not 64 lowercase hex characters'],
    ["a pin text", () => parseHeaderPin({ ...pin, text: 5 }), "HEADER_INVALID_RECORD", "pin text 5 is not a well-formed string"],
    ["a pin time", () => parseHeaderPin({ ...pin, pinned_at_ms: -1 }), "HEADER_INVALID_TIME", "pinned_at_ms -1 is not a non-negative integer of milliseconds"],
    ["a time", () => checkTime(1.5), "HEADER_INVALID_TIME", "time 1.5 is not a non-negative integer of milliseconds"],
    ["a time string", () => checkTime("1"), "HEADER_INVALID_TIME", 'time "1" is not a non-negative integer of milliseconds'],
    ["a revision that is an array", () => parseHeaderRevision([]), "HEADER_INVALID_RECORD", "header_revision must be an object, got []"],
    ["a revision with an extra field", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { extra: 1 })), "HEADER_INVALID_RECORD", 'header_revision has an unknown field "extra"'],
    ["a revision typed as a pin", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { type: "header_pin" })), "HEADER_INVALID_RECORD", 'record type "header_pin" is not header_revision'],
    ["a change that is null", () => parseHeaderRevision(revisionOf(null, "t")), "HEADER_INVALID_RECORD", "change must be an object, got null"],
    ["a full change with a diff field", () => parseHeaderRevision(revisionOf({ form: "full", text: "t", base_digest: sha256Hex("") }, "t")), "HEADER_INVALID_RECORD", 'full change has an unknown field "base_digest"'],
    ["a diff change without patches", () => parseHeaderRevision(revisionOf({ form: "diff", base_digest: sha256Hex("") }, "t")), "HEADER_INVALID_RECORD", 'diff change lacks the field "patches"'],
    ["diff patches that are not an array", () => parseHeaderRevision(revisionOf({ form: "diff", base_digest: sha256Hex(""), patches: 5 }, "t")), "HEADER_INVALID_RECORD", "change patches 5 is not an array"],
    ["a diff base digest", () => parseHeaderRevision(revisionOf({ form: "diff", base_digest: "x", patches: [] }, "t")), "HEADER_INVALID_RECORD", 'base_digest "x" is not 64 lowercase hex characters'],
    ["a change form", () => parseHeaderRevision(revisionOf({ form: "x" }, "t")), "HEADER_INVALID_RECORD", 'change form "x" is neither diff nor full'],
    ["a change text", () => parseHeaderRevision(revisionOf({ form: "full", text: 5 }, "t")), "HEADER_INVALID_RECORD", "change text 5 is not a well-formed string"],
    ["a revision digest", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { digest: "d" })), "HEADER_INVALID_RECORD", 'revision digest "d" is not 64 lowercase hex characters'],
    ["sources not an array", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: 5 })), "HEADER_INVALID_RECORD", "sources 5 is not an array"],
    ["a source not an object", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: [5] })), "HEADER_INVALID_RECORD", "source 0 must be an object, got 5"],
    ["a source without text", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: [{ name: "a", digest: sha256Hex("") }] })), "HEADER_INVALID_RECORD", 'source 0 lacks the field "text"'],
    ["a source name", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: [{ name: 5, digest: sha256Hex(""), text: "" }] })), "HEADER_INVALID_RECORD", "source name 5 is not a well-formed string"],
    ["an empty source name", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: [{ name: "", digest: sha256Hex(""), text: "" }] })), "HEADER_INVALID_RECORD", 'source name "" is empty or repeated'],
    [
      "a repeated source name",
      () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: [{ name: "a", digest: sha256Hex(""), text: "" }, { name: "a", digest: sha256Hex(""), text: "" }] })),
      "HEADER_INVALID_RECORD",
      'source name "a" is empty or repeated',
    ],
    ["a source digest", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: [{ name: "a", digest: "x", text: "" }] })), "HEADER_INVALID_RECORD", 'source "a" digest "x" is not 64 lowercase hex characters'],
    ["a source text", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { sources: [{ name: "a", digest: sha256Hex(""), text: null }] })), "HEADER_INVALID_RECORD", "source text null is not a well-formed string"],
    ["an observed time", () => parseHeaderRevision(revisionOf({ form: "full", text: "t" }, "t", { observed_at_ms: -5 })), "HEADER_INVALID_TIME", "observed_at_ms -5 is not a non-negative integer of milliseconds"],
  ])("%s", (_what, fn, code, message) => {
    expect(refusal(fn)).toEqual({ code, message });
  });
});

group("actor refusals and edges", () => {
  const session = { origin: "session", execution_id: "e-1", step: 0 };
  it.each<[string, unknown, string]>([
    ["null", null, "actor must be an object, got null"],
    ["a session actor without a step", { origin: "session", execution_id: "e" }, 'session actor lacks the field "step"'],
    ["a session actor with an extra field", { ...session, x: 1 }, 'session actor has an unknown field "x"'],
    ["a host actor with a step", { origin: "host", step: 1 }, 'host actor has an unknown field "step"'],
    ["an empty execution id", { ...session, execution_id: "" }, 'execution_id "" is not an identifier'],
    ["a 129-character execution id", { ...session, execution_id: "e".repeat(129) }, `execution_id ${describe("e".repeat(129))} is not an identifier`],
    ["an execution id with a space", { ...session, execution_id: "e 1" }, 'execution_id "e 1" is not an identifier'],
    ["an execution id that is a number", { ...session, execution_id: 5 }, "execution_id 5 is not an identifier"],
    ["a negative step", { ...session, step: -1 }, "step -1 is not a non-negative integer"],
    ["a fractional step", { ...session, step: 0.5 }, "step 0.5 is not a non-negative integer"],
    ["a string step", { ...session, step: "1" }, 'step "1" is not a non-negative integer'],
    ["an unknown origin", { origin: "user" }, 'actor origin "user" is neither session nor host'],
    ["a path that is not text", { origin: "host", path: 5 }, "actor path 5 is not a well-formed string"],
    ["a reason that is not text", { ...session, reason: ["r"] }, 'actor reason ["r"] is not a well-formed string'],
  ])("%s", (_what, actor, message) => {
    expect(refusal(() => checkActor(actor))).toEqual({ code: "HEADER_INVALID_ACTOR", message });
  });

  it("accepts a 128-character execution id of every allowed character, step 0, and drops undefined extras", () => {
    const id = `Az09_.-${"x".repeat(121)}`;
    expect(checkActor({ ...session, execution_id: id, path: undefined, reason: "r" })).toStrictEqual({
      origin: "session",
      execution_id: id,
      step: 0,
      reason: "r",
    });
    expect(checkActor({ origin: "host", path: "AGENTS.md" })).toStrictEqual({ origin: "host", path: "AGENTS.md" });
  });
});

group("chain, render and rule refusals", () => {
  it("resolve names why each link stopped", () => {
    const pin = pinOf("a\n");
    expect(resolve([{ type: "header_revision" }]).stopped).toEqual({
      index: 0,
      code: "HEADER_NO_PIN",
      message: "the chain has no header_pin to start from",
    });
    expect(resolve([{ ...pin, digest: sha256Hex("z") }]).stopped).toEqual({
      index: 0,
      code: "HEADER_RESULT_MISMATCH",
      message: `pin text has digest ${sha256Hex("a\n")}, the pin says ${sha256Hex("z")}`,
    });
    const badSource = { ...revisionOf({ form: "full", text: "b\n" }, "b\n"), sources: [{ name: "a", digest: sha256Hex("c\n"), text: "b\n" }] };
    expect(resolve([pin, badSource]).stopped).toEqual({
      index: 1,
      code: "HEADER_SOURCE_MISMATCH",
      message: `source "a" text does not have its recorded digest ${sha256Hex("c\n")}`,
    });
    const badJoin = { ...revisionOf({ form: "full", text: "b\n" }, "b\n"), digest: sha256Hex("c\n") };
    expect(resolve([pin, badJoin]).stopped).toEqual({
      index: 1,
      code: "HEADER_SOURCE_MISMATCH",
      message: `the recorded sources do not join to the revision digest ${sha256Hex("c\n")}`,
    });
  });

  it("formatStamp reads the last millisecond of year 9999 and refuses the next", () => {
    const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    expect(formatStamp(last)).toBe("9999-12-31T23:59:59Z");
    expect(refusal(() => formatStamp(last + 1))).toEqual({ code: "HEADER_INVALID_TIME", message: `time ${last + 1} is past year 9999` });
  });

  it("renderObservation refuses a diff that neither patches its base nor joins its sources to its digest", () => {
    const revision = {
      ...revisionOf({ form: "diff", base_digest: sha256Hex("q\n"), patches: [{ source: "instructions", start_line: 1, old_lines: ["q\n"], new_lines: ["b\n"] }] }, "b\n"),
      sources: [{ name: "a", digest: sha256Hex("c\n"), text: "c\n" }],
    } as HeaderRevision;
    expect(refusal(() => renderObservation(revision, "x\n"))).toEqual({
      code: "HEADER_SOURCE_MISMATCH",
      message: `revision ${sha256Hex("b\n")} neither patches its base nor joins its sources to its digest`,
    });
  });

  it("observe before a pin says to pin first", () => {
    expect(refusal(() => observe([], [{ name: "a", text: "" }], { origin: "host" }, 0))).toEqual({
      code: "HEADER_NO_PIN",
      message: "the chain has no header_pin yet: pin at session start first",
    });
  });
});
