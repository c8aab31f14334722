import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyChange, revise, verifiedChange } from "./change.js";
import { resolve } from "./chain.js";
import { sha256Hex } from "./digest.js";
import { HeaderError } from "./errors.js";
import { joinLines, splitLines } from "./lines.js";
import { observe, pinAtStart } from "./rules.js";
import { joinSources } from "./sources.js";
import type { Change, DiffChange, SourceInput } from "./types.js";

// Pieces chosen to hit every line-ending case: "\n", "\r\n", a lone "\r", astral and BMP non-ASCII.
const piece = fc.constantFrom("a", "b", "rule", " ", "é", "😀", "𝄞", "\r", "\n", "\n", "\r\n", "\r\n");
const text = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(""));

/** A text derived from `base` by line edits: delete, insert, replace, or flip a line's ending. */
function edited(base: string): fc.Arbitrary<string> {
  const op = fc.record({
    kind: fc.constantFrom("delete", "insert", "replace", "ending"),
    at: fc.nat(),
    line: text,
  });
  return fc.array(op, { maxLength: 6 }).map((ops) => {
    const lines = splitLines(base);
    for (const { kind, at, line } of ops) {
      const i = lines.length === 0 ? 0 : at % (lines.length + (kind === "insert" ? 1 : 0));
      if (kind === "insert") lines.splice(i, 0, line);
      else if (lines.length === 0) continue;
      else if (kind === "delete") lines.splice(i, 1);
      else if (kind === "replace") lines[i] = line;
      else {
        const current = lines[i]!;
        lines[i] = current.endsWith("\r\n") ? `${current.slice(0, -2)}\n` : current.endsWith("\n") ? `${current.slice(0, -1)}\r\n` : `${current}\n`;
      }
    }
    return joinLines(lines);
  });
}

/**
 * Property runs: the full count in `pnpm test`; a tenth under `pnpm mutate header`
 * (vitest.stryker.config.ts sets KLBR_MUTATION), where this suite runs once per covering mutant on
 * a shared 2-core box. The example tests beside it pin the same edges deterministically.
 */
function runs(n: number): number {
  return process.env.KLBR_MUTATION ? Math.ceil(n / 10) : n;
}

const pair = text.chain((a) => fc.tuple(fc.constant(a), fc.oneof(edited(a), text)));

const names = fc.uniqueArray(fc.constantFrom("contract", "agents", "local", "instructions"), { maxLength: 3 });
function sourcesNamed(list: string[]): fc.Arbitrary<SourceInput[]> {
  return fc.tuple(...list.map(() => text)).map((texts) => list.map((name, i) => ({ name, text: texts[i]! })));
}
const sourceSet = names.chain(sourcesNamed);
/** Two source sets with the same names (so patched per source), the second edited from the first. */
const alignedPair = sourceSet.chain((base) =>
  fc.tuple(fc.constant(base), fc.tuple(...base.map((s) => edited(s.text))).map((texts) => base.map((s, i) => ({ name: s.name, text: texts[i]! })))),
);

function target(sources: SourceInput[]) {
  return { digest: sha256Hex(joinSources(sources)), sources: sources.map((s) => ({ name: s.name, digest: sha256Hex(s.text) })) };
}

/** Mutate one line of one patch so it no longer says what the texts say. */
function tamper(change: DiffChange, pick: number, side: "old_lines" | "new_lines"): DiffChange | null {
  const candidates = change.patches.flatMap((patch, p) => patch[side].map((_, l) => [p, l] as const));
  if (candidates.length === 0) return null;
  const [p, l] = candidates[pick % candidates.length]!;
  const copy = structuredClone(change);
  const line = copy.patches[p]![side][l]!;
  const ending = line.endsWith("\r\n") ? "\r\n" : line.endsWith("\n") ? "\n" : "";
  copy.patches[p]![side][l] = `${line.slice(0, line.length - ending.length)}~${ending}`;
  return copy;
}

describe("revise then apply", () => {
  it("lines split and join back exactly, one ending per line at most", () => {
    fc.assert(
      fc.property(text, (t) => {
        const lines = splitLines(t);
        expect(joinLines(lines)).toBe(t);
        for (const line of lines) expect(line.indexOf("\n") === -1 || line.indexOf("\n") === line.length - 1).toBe(true);
      }),
    );
  });

  it("reconstructs the new text exactly from a bare base, always as a verified diff", () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const next = [{ name: "contract", text: b }];
        const change = revise(a, next);
        expect(change.form).toBe("diff");
        expect(applyChange(a, change, target(next)).text).toBe(b);
      }),
      { numRuns: runs(300) },
    );
  });

  it("reconstructs every source exactly when the names line up", () => {
    fc.assert(
      fc.property(alignedPair, ([base, next]) => {
        const change = revise(base, next);
        expect(change.form).toBe("diff");
        for (const patch of (change as DiffChange).patches) expect(next.map((s) => s.name)).toContain(patch.source);
        const applied = applyChange(base, change, target(next));
        expect(applied.text).toBe(joinSources(next));
        expect(applied.sources).toStrictEqual(next);
      }),
      { numRuns: runs(200) },
    );
  });

  it("reconstructs the joined text when the source sets do not line up", () => {
    fc.assert(
      fc.property(sourceSet, sourceSet, (base, next) => {
        const change = revise(base, next);
        const applied = applyChange(base, change, target(next));
        expect(applied.text).toBe(joinSources(next));
      }),
      { numRuns: runs(200) },
    );
  });

  it("a chain of observations resolves to the newest text at every step", () => {
    fc.assert(
      fc.property(sourceSet, fc.array(fc.oneof(sourceSet, alignedPair.map(([, n]) => n)), { maxLength: 6 }), (first, later) => {
        const chain: unknown[] = [pinAtStart(first, 1)];
        for (const [i, sources] of later.entries()) {
          const revision = observe(chain, sources, { origin: "host" }, 2 + i);
          if (revision === null) {
            expect(sha256Hex(joinSources(sources))).toBe(resolve(chain).digest);
            continue;
          }
          chain.push(revision);
          const resolution = resolve(chain);
          expect(resolution.complete).toBe(true);
          expect(resolution.text).toBe(joinSources(sources));
        }
      }),
      { numRuns: runs(150) },
    );
  });
});

describe("tampered patches", () => {
  const tampered = fc.tuple(pair, fc.nat(), fc.constantFrom("old_lines" as const, "new_lines" as const));

  it("are detected by applyChange and never yield a text", () => {
    fc.assert(
      fc.property(tampered, ([[a, b], pick, side]) => {
        const next = [{ name: "contract", text: b }];
        const bad = tamper(revise(a, next) as DiffChange, pick, side);
        fc.pre(bad !== null);
        expect(() => applyChange(a, bad!, target(next))).toThrow(HeaderError);
      }),
      { numRuns: runs(300) },
    );
  });

  it("are detected per source too, and fall back to the whole text", () => {
    fc.assert(
      fc.property(alignedPair, fc.nat(), fc.constantFrom("old_lines" as const, "new_lines" as const), ([base, next], pick, side) => {
        const bad = tamper(revise(base, next) as DiffChange, pick, side);
        fc.pre(bad !== null);
        expect(() => applyChange(base, bad!, target(next))).toThrow(HeaderError);
        expect(verifiedChange(base, bad, next)).toStrictEqual<Change>({ form: "full", text: joinSources(next) });
      }),
      { numRuns: runs(200) },
    );
  });

  it("fall back to the whole text", () => {
    fc.assert(
      fc.property(tampered, ([[a, b], pick, side]) => {
        const next = [{ name: "contract", text: b }];
        const bad = tamper(revise(a, next) as DiffChange, pick, side);
        fc.pre(bad !== null);
        expect(verifiedChange(a, bad, next)).toStrictEqual<Change>({ form: "full", text: b });
      }),
      { numRuns: runs(200) },
    );
  });

  it("stop the chain at the last text somebody wrote", () => {
    fc.assert(
      fc.property(tampered, ([[a, b], pick, side]) => {
        const chain: unknown[] = [pinAtStart([{ name: "contract", text: a }], 1)];
        const revision = observe(chain, [{ name: "contract", text: b }], { origin: "host" }, 2);
        fc.pre(revision !== null && revision.change.form === "diff");
        const bad = tamper(revision!.change as DiffChange, pick, side);
        fc.pre(bad !== null);
        const resolution = resolve([...chain, { ...revision, change: bad }]);
        expect(resolution.text).toBe(a);
        expect(resolution.stopped?.index).toBe(1);
      }),
      { numRuns: runs(200) },
    );
  });
});
