import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { anyTagged, environHas, killTagged, sharedScans, signalIfSame, tagEntry, treeTag, TREE_ENV } from "./tagged.js";
import { isAlive, readProc } from "./tree.js";

const V = "0123456789abcdef0123456789abcdef";
const entry = Buffer.from(`KLBR_TREE=${V}`);
const environ = (...entries: string[]) => Buffer.from(entries.map((e) => `${e}\0`).join(""));

describe("environHas", () => {
  it("finds the entry first, in the middle, last, alone, and without a final NUL", () => {
    expect(environHas(environ(`KLBR_TREE=${V}`, "A=1", "B=2"), entry)).toBe(true);
    expect(environHas(environ("A=1", `KLBR_TREE=${V}`, "B=2"), entry)).toBe(true);
    expect(environHas(environ("A=1", "B=2", `KLBR_TREE=${V}`), entry)).toBe(true);
    expect(environHas(environ(`KLBR_TREE=${V}`), entry)).toBe(true);
    expect(environHas(Buffer.from(`A=1\0KLBR_TREE=${V}`), entry)).toBe(true);
  });

  it("refuses look-alikes: a longer or shorter value, a longer name, the entry inside another value", () => {
    expect(environHas(environ("A=1", `KLBR_TREE=${V}0`, "B=2"), entry)).toBe(false);
    expect(environHas(environ("A=1", `KLBR_TREE=${V.slice(0, -1)}`, "B=2"), entry)).toBe(false);
    expect(environHas(environ(`XKLBR_TREE=${V}`, "B=2"), entry)).toBe(false);
    expect(environHas(environ(`OTHER=KLBR_TREE=${V}`), entry)).toBe(false);
    expect(environHas(environ(`KLBR_TREE=${"f".repeat(32)}`), entry)).toBe(false);
    expect(environHas(Buffer.alloc(0), entry)).toBe(false);
  });

  it("keeps looking past a look-alike to the real entry", () => {
    expect(environHas(environ(`XKLBR_TREE=${V}`, `KLBR_TREE=${V}0`, `KLBR_TREE=${V}`), entry)).toBe(true);
  });
});

describe("treeTag / tagEntry", () => {
  it("makes a fresh 128-bit hex value under KLBR_TREE each time", () => {
    const a = treeTag();
    const b = treeTag();
    expect(a.name).toBe(TREE_ENV);
    expect(a.value).toMatch(/^[0-9a-f]{32}$/);
    expect(a.value).not.toBe(b.value);
    expect(tagEntry(a).toString()).toBe(`KLBR_TREE=${a.value}`);
  });

  it("refuses a tag ordinary processes could share", () => {
    expect(() => tagEntry({ name: "HOME", value: "/root" })).toThrow(RangeError);
    expect(() => tagEntry({ name: TREE_ENV, value: "" })).toThrow(RangeError);
    expect(() => tagEntry({ name: TREE_ENV, value: V.toUpperCase() })).toThrow(RangeError);
    expect(() => tagEntry({ name: TREE_ENV, value: `${V}0` })).toThrow(RangeError);
    expect(() => tagEntry({ name: "A=B", value: V })).toThrow(RangeError);
  });
});

/** Start `sleep 1000` with `env` over this process's environment; resolves once it runs. */
function sleeper(env: Record<string, string>): number {
  const child = spawn("sleep", ["1000"], { env: { ...process.env, ...env }, stdio: "ignore", detached: true });
  child.unref();
  return child.pid as number;
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

describe("signalIfSame", () => {
  it("signals a pid only while it has the recorded start time", () => {
    const pid = sleeper({});
    try {
      const start = readProc(pid)!.start;
      expect(signalIfSame(pid, start + 1, "SIGKILL")).toBe(false);
      expect(isAlive(pid)).toBe(true);
      expect(signalIfSame(pid, start, "SIGKILL")).toBe(true);
    } finally {
      killAll([pid]);
    }
  });
});

describe("anyTagged (the shared scan)", () => {
  it("answers many tags asked in the same turn with one scan of /proc", async () => {
    const tags = Array.from({ length: 50 }, () => treeTag());
    const before = { ...sharedScans };
    const answers = await Promise.all(tags.map((t) => anyTagged(tagEntry(t))));
    expect(answers).toEqual(Array(50).fill(false));
    expect(sharedScans.scans - before.scans).toBe(1);
    expect(sharedScans.tags - before.tags).toBe(50);
  });

  it("finds the one live tagged process among the batch, and not its look-alikes", async () => {
    const tag = treeTag();
    const live = sleeper({ [tag.name]: tag.value });
    const lookAlikes = [sleeper({ [tag.name]: `${tag.value}0` }), sleeper({ [`X${tag.name}`]: tag.value })];
    try {
      const others = Array.from({ length: 20 }, () => treeTag());
      const before = sharedScans.scans;
      const [hit, ...misses] = await Promise.all([tag, ...others, tag].map((t) => anyTagged(tagEntry(t))));
      expect(hit).toBe(true);
      expect(misses.slice(0, -1)).toEqual(Array(20).fill(false));
      expect(misses.at(-1)).toBe(true); // the same tag asked twice: both answered
      expect(sharedScans.scans - before).toBe(1);
      const near = { name: tag.name, value: (tag.value[0] === "a" ? "b" : "a") + tag.value.slice(1) };
      expect(await anyTagged(tagEntry(near))).toBe(false);
    } finally {
      killAll([live, ...lookAlikes]);
    }
  });
});

describe("killTagged", () => {
  it("kills an orphan in its own session that carries the tag, and nothing that only looks like it", async () => {
    const tag = treeTag();
    // sh starts a setsid sleep and exits: the sleep is orphaned, outside any tree of ours.
    const orphan = Number(
      execFileSync("sh", ["-c", "setsid sleep 1000 >/dev/null 2>&1 & echo $!"], {
        env: { ...process.env, [tag.name]: tag.value },
        encoding: "utf8",
      }).trim(),
    );
    const others = [
      sleeper({ [tag.name]: `${tag.value}0` }),
      sleeper({ [tag.name]: tag.value.slice(0, -1) }),
      sleeper({ [`X${tag.name}`]: tag.value }),
      sleeper({ [tag.name]: treeTag().value }),
    ];
    try {
      expect(readProc(orphan)?.pgid).toBe(orphan);
      expect(isAlive(orphan)).toBe(true);
      expect(await killTagged(tag)).toEqual([]);
      expect(isAlive(orphan)).toBe(false);
      for (const pid of others) expect(isAlive(pid)).toBe(true);
    } finally {
      killAll([orphan, ...others]);
    }
  });

  it("never kills the calling process, even when it carries the tag", () => {
    const tag = treeTag();
    const script = fileURLToPath(new URL("../test/fakes/self-sweep.ts", import.meta.url));
    const out = execFileSync(process.execPath, ["--import", "tsx", "--conditions=@klbr/source", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: { ...process.env, [tag.name]: tag.value },
      encoding: "utf8",
      // SIGKILL: a process that froze itself would ignore the default SIGTERM.
      timeout: 15_000,
      killSignal: "SIGKILL",
    });
    const { left, sibling, siblingAlive } = JSON.parse(out.trim().split("\n").at(-1)!) as { left: number[]; sibling: number; siblingAlive: boolean };
    expect(left).toEqual([]);
    expect(sibling).toBeGreaterThan(0);
    expect(siblingAlive).toBe(false);
  });
});
