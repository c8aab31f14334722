// Properties of the source digest: every change of a byte, a name or the file set changes it;
// the order files are created in (or listed in) does not.
import fc from "fast-check";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runs } from "../test/helpers/runs.js";
import { removeDir, tempDir } from "../test/helpers/tree.js";
import { digestEntries } from "./digest.js";
import { sourceDigest } from "./scan.js";

const segment = fc
  .array(fc.constantFrom("a", "b", "X", "0", "_", "-", ".", "\u00e9", "\u65e5", "\uFF61", "\u{1F600}"), { minLength: 1, maxLength: 5 })
  .map((p) => p.join(""))
  .filter((s) => s !== "." && s !== ".." && s !== "__pycache__");
const name = fc
  .tuple(fc.array(segment, { maxLength: 2 }), segment, fc.constantFrom(".py", ".json", ".md"))
  .map(([dirs, stem, ext]) => [...dirs, stem + ext].join("/"));
/** Admitted trees: no file name is also a folder of another. */
const tree = fc
  .dictionary(name, fc.uint8Array({ maxLength: 48 }), { minKeys: 1, maxKeys: 12 })
  .filter((t) => !Object.keys(t).some((a) => Object.keys(t).some((b) => b.startsWith(`${a}/`))));

const digestOf = (t: Record<string, Uint8Array>) =>
  digestEntries(Object.entries(t).map(([n, content]) => ({ name: Buffer.from(n), content })));

describe("digest properties", () => {
  const base = tempDir();
  afterAll(() => removeDir(base));
  let n = 0;

  it("creation order does not change the digest, and disk equals memory", () => {
    fc.assert(
      fc.property(tree, fc.func(fc.integer()), (t, key) => {
        const names = Object.keys(t);
        const shuffled = [...names].sort((a, b) => key(a) - key(b));
        const roots = [names, shuffled].map((order) => {
          const root = path.join(base, `t${n++}`);
          for (const rel of order) {
            fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
            fs.writeFileSync(path.join(root, rel), t[rel]!);
          }
          return root;
        });
        const [a, b] = roots.map((r) => sourceDigest(r));
        expect(a).toEqual(b);
        expect(a!.digest).toBe(digestOf(t));
        expect(a!.files.map((f) => f.name)).toEqual(names.map((x) => Buffer.from(x)).sort(Buffer.compare).map(String));
      }),
      { numRuns: runs(60) },
    );
  });

  it("flipping any byte, growing or shrinking a file, renaming, dropping or adding a file changes the digest", () => {
    const change = fc.constantFrom("byte", "append", "truncate", "rename", "drop", "add");
    fc.assert(
      fc.property(tree, change, fc.nat(), fc.integer({ min: 1, max: 255 }), name, fc.uint8Array({ minLength: 1, maxLength: 4 }), (t, kind, pick, flip, newName, extra) => {
        const names = Object.keys(t);
        const victim = names[pick % names.length]!;
        const content = t[victim]!;
        const changed: Record<string, Uint8Array> = { ...t };
        fc.pre(!(newName in t) || !["rename", "add"].includes(kind));
        if (kind === "byte" && content.length > 0) {
          const copy = Uint8Array.from(content);
          const at = pick % copy.length;
          copy[at] = copy[at]! ^ flip;
          changed[victim] = copy;
        } else if (kind === "truncate" && content.length > 0) {
          changed[victim] = content.subarray(0, content.length - 1);
        } else if (kind === "byte" || kind === "truncate" || kind === "append") {
          changed[victim] = Buffer.concat([content, extra]);
        } else if (kind === "rename") {
          delete changed[victim];
          changed[newName] = content;
        } else if (kind === "drop") {
          delete changed[victim];
        } else {
          changed[newName] = extra;
        }
        expect(digestOf(changed)).not.toBe(digestOf(t));
      }),
      { numRuns: runs(300) },
    );
  });

  it("the length framing keeps name and content bytes apart", () => {
    const one = (n: string, c: string) => digestEntries([{ name: Buffer.from(n), content: Buffer.from(c) }]);
    expect(one("ab.py", "c")).not.toBe(one("a.py", "bc"));
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), fc.nat(), (n, c, cut) => {
        const joined = n + c;
        const k = 1 + (cut % joined.length);
        fc.pre(k !== n.length);
        expect(one(joined.slice(0, k), joined.slice(k))).not.toBe(one(n, c));
      }),
      { numRuns: runs(100) },
    );
  });
});
