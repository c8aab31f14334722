import { describe, expect, it } from "vitest";
import { assembleIndex, type SkillCandidate } from "./assemble";
import { refusalLines } from "./refusal-lines";

const ok = (name: string, root: SkillCandidate["root"]): SkillCandidate => ({ name, root, path: `/${root}/${name}`, verdict: { ok: true, digest: "0".repeat(64) } });
const bad = (name: string, root: SkillCandidate["root"], reason: "oversize" | "invalid_id" | "title_mismatch"): SkillCandidate => ({ name, root, path: `/${root}/${name}`, verdict: { ok: false, reason } });

describe("refusal lines (issue 19 item 10)", () => {
  it("an id in both roots reads once, naming the roots", () => {
    const index = assembleIndex([ok("goodone", "managed"), ok("goodone", "builtin"), ok("other", "builtin")]);
    expect(refusalLines(index.refused)).toEqual(["goodone: duplicate: builtin and managed"]);
  });

  it("a contested id with its own reason in one root says which root has which", () => {
    const index = assembleIndex([bad("goodone", "builtin", "oversize"), ok("goodone", "managed")]);
    expect(refusalLines(index.refused)).toEqual(["goodone: oversize: builtin; duplicate: builtin and managed"]);
  });

  it("the same reason in both roots reads once with both roots; a one-root refusal keeps its short form", () => {
    const index = assembleIndex([bad("Bad Name", "builtin", "invalid_id"), bad("Bad Name", "managed", "invalid_id"), bad("solo", "managed", "title_mismatch")]);
    expect(refusalLines(index.refused)).toEqual(["Bad Name: invalid_id: builtin and managed", "solo: title_mismatch"]);
  });

  it("no line is repeated, whatever the refusals", () => {
    const index = assembleIndex([ok("a", "builtin"), ok("a", "managed"), bad("b", "builtin", "oversize"), bad("b", "managed", "title_mismatch"), ok("c", "managed")]);
    const lines = refusalLines(index.refused);
    expect(new Set(lines).size).toBe(lines.length);
    expect(lines).toEqual(["a: duplicate: builtin and managed", "b: oversize: builtin; title_mismatch: managed"]);
  });
});
