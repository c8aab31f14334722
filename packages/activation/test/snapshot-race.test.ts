import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sourceDigest, verifyRelease } from "../src/index.js";
import { all, bundleChild, exited, forkAll } from "./helpers/children.js";
import { removeDir, tempDir, writeSource } from "./helpers/tree.js";

const PROCESSES = 8;
let child: { script: string; dispose: () => void };
beforeAll(async () => {
  child = await bundleChild("snapshot-child");
}, 60_000);
afterAll(() => child?.dispose());

describe("concurrent snapshots of the same bytes from separate processes", () => {
  const base = tempDir();
  afterAll(() => removeDir(base));

  it("all get the same release, exactly one wrote it, and no temporary directory is left", async () => {
    const draft = path.join(base, "draft");
    fs.mkdirSync(draft);
    writeSource(draft, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`pkg/m${i}.py`, `x = ${i}\n`.repeat(200)])));
    const releases = path.join(base, "releases");
    const children = forkAll(child.script, PROCESSES, () => [draft, releases]);
    const ready = all(children, "ready");
    const done = all(children, "done");
    await ready;
    for (const c of children) c.send("go");
    const results = await done;
    await exited(children);

    const digest = sourceDigest(draft).digest;
    expect(results.map((r) => r.code)).toEqual(Array(PROCESSES).fill(undefined));
    expect(new Set(results.map((r) => r.digest))).toEqual(new Set([digest]));
    expect(new Set(results.map((r) => r.path))).toEqual(new Set([path.join(releases, digest)]));
    expect(results.filter((r) => r.reused === false)).toHaveLength(1); // one rename won; the rest reused it
    expect(fs.readdirSync(releases)).toEqual([digest]);
    expect(verifyRelease(path.join(releases, digest)).digest).toBe(digest);
  }, 120_000);
});
