// C20 through the CLI: `klbr exec` prints each display's text/plain and where its image went,
// `klbr log` (text and --json) lists them, `klbr display get` writes one out; the real matplotlib
// plot's stored PNG decodes (Pillow) to the figure's size; a digest that names nothing is
// DISPLAY_NOT_FOUND with exit 65 and nothing written. Embedded first, then through a daemon.
import { execFileSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EXIT } from "../src/cli/exit-codes";
import { klbrRun, klbrShell, type Run } from "./cli-run";
import { tempDir } from "./helpers";
import { spawnServe, stopDaemon } from "./processes";

const HELPERS = readFileSync(new URL("./display-cells.py", import.meta.url), "utf8");

let dataDir: string;
let workspace: string;
let daemon: ChildProcess | null = null;
let cells = 0;

const klbr = (...args: string[]): Promise<Run> => klbrRun(["--data-dir", dataDir, "--workspace", workspace, ...args]);
/** Run a cell (with the picture helpers) from a file. */
async function exec(code: string, ...flags: string[]): Promise<Run> {
  const file = join(workspace, `cell-${++cells}.py`);
  writeFileSync(file, `${HELPERS}\n${code}`);
  return klbr("exec", ...flags, "-f", file);
}
const sha = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const IMAGE_LINE = /\[image\/png (\d+)x(\d+) · \d+ (?:B|KiB) · sha256:([0-9a-f]{12})\] klbr display get sha256:\3 -o FILE/;

beforeAll(async () => {
  dataDir = tempDir("klbr-d-");
  workspace = tempDir("klbr-dw-");
  expect((await klbr("init")).code).toBe(0);
}, 120_000);
afterAll(async () => {
  await stopDaemon(daemon);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe("embedded (no daemon)", () => {
  let digest = "";

  test("klbr exec prints the display's text/plain and its image line with the display get hint, in order with the output", async () => {
    const r = await exec("print('before')\ndisplay(Picture(6, 4))\nprint('after')");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toEqual(["before", "<Picture 6x4>", expect.stringMatching(IMAGE_LINE), "after"]);
    const m = IMAGE_LINE.exec(lines[2]!)!;
    expect([m[1], m[2]]).toEqual(["6", "4"]);
    digest = `sha256:${m[3]}`;
  }, 120_000);

  test("klbr display get writes the image out by its 12-digit digest; the bytes are the stored image's", async () => {
    const out = join(workspace, "pic.png");
    const r = await klbr("display", "get", digest, "-o", out);
    expect(r.code).toBe(0);
    const bytes = readFileSync(out);
    expect(sha(bytes).startsWith(digest)).toBe(true);
    expect(bytes.readUInt32BE(16)).toBe(6);
    expect(r.stderr).toContain("image/png");
    // -o - writes the same bytes to stdout.
    const piped = await klbrShell(`KLBR --data-dir '${dataDir}' display get ${digest} -o - | sha256sum`);
    expect(piped.code).toBe(0);
    expect(`sha256:${piped.stdout.split(" ")[0]}`).toBe(sha(bytes));
  }, 120_000);

  test("klbr exec --json lists the displays and displays_dropped on the record", async () => {
    const r = await exec("display(Picture(2, 2))\ndisplay('text')", "--json");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { displays: Array<{ seq: number; text: string; images: unknown[] }>; displays_dropped: number; origin: string };
    expect(report.displays.map((d) => [d.seq, d.text, d.images.length])).toEqual([
      [0, "<Picture 2x2>", 1],
      [1, "'text'", 0],
    ]);
    expect(report.displays_dropped).toBe(0);
    expect(report.origin).toBe("exec");
  }, 120_000);

  test("1,000 displays: 32 printed, the rest counted on stderr, exit 0", async () => {
    const r = await exec("for i in range(1000):\n    display(i)");
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split("\n")).toEqual([...Array(32).keys()].map(String));
    expect(r.stderr).toContain("968 more displays were not shown");
  }, 120_000);

  test("klbr log shows each cell's displays under its line; --json lists them in full", async () => {
    const text = await klbr("log", "--kind", "execution");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/execution .*displays=1[\s\S]*\n {2}display 0: <Picture 6x4>\n {4}\[image\/png 6x4 · \d+ B · sha256:[0-9a-f]{12}\] klbr display get/);
    const json = await klbr("log", "--json", "--kind", "execution");
    const rows = json.stdout.trim().split("\n").map((l) => JSON.parse(l) as { displays: Array<{ images: Array<{ digest: string }> }>; origin: string });
    const withImage = rows.find((r) => r.displays.some((d) => d.images.some((i) => i.digest.startsWith(digest))));
    expect(withImage?.origin).toBe("exec");
    expect(withImage?.displays[0]!.images[0]!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  }, 120_000);

  test.each([
    ["a digest no blob has", `sha256:${"0".repeat(64)}`],
    ["an unknown 12-digit prefix", "0123456789ab"],
    ["too short a prefix", "sha256:abc"],
    ["not hex", "sha256:not-a-digest!"],
  ])("%s: DISPLAY_NOT_FOUND, exit 65 (EX_DATAERR), nothing written", async (_what, bad) => {
    const out = join(workspace, `never-${cells++}.png`);
    const r = await klbr("display", "get", bad, "-o", out);
    expect(r.code).toBe(EXIT.DATA);
    expect(r.stderr).toMatch(/^klbr: DISPLAY_NOT_FOUND: /);
    expect(r.stderr).toContain("hint: `klbr log`");
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  test("display get without -o is a usage error (64)", async () => {
    const r = await klbr("display", "get", digest);
    expect(r.code).toBe(EXIT.USAGE);
  }, 120_000);

  test("a real matplotlib plot through klbr exec: the stored PNG decodes to the figure's size (640x480 at dpi 100)", async () => {
    const r = await exec("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\nplt.title('klbr')\nplt.show()");
    expect(r.code).toBe(0);
    const m = IMAGE_LINE.exec(r.stdout)!;
    expect(m).not.toBeNull();
    expect([m[1], m[2]]).toEqual(["640", "480"]);
    expect(r.stdout).toContain("<Figure size 640x480 with 1 Axes>");
    const out = join(workspace, "plot.png");
    expect((await klbr("display", "get", `sha256:${m[3]}`, "-o", out)).code).toBe(0);
    const size = execFileSync("python3", ["-c", "import sys\nfrom PIL import Image\nim = Image.open(sys.argv[1]); im.load(); print(im.format, *im.size)", out]).toString().trim();
    expect(size).toBe("PNG 640 480");
  }, 120_000);
});

describe("klbr route add --images", () => {
  test("declares the route as one that reads images; without it the route has no images field", async () => {
    const add = (name: string, ...extra: string[]) => klbr("route", "add", name, "--api", "anthropic", "--base-url", "http://127.0.0.1:9", "--model", "m", "--json", ...extra);
    const withImages = JSON.parse((await add("sees", "--images")).stdout) as { routes: Array<{ name: string; images?: boolean }> };
    expect(withImages.routes.find((r) => r.name === "sees")!.images).toBe(true);
    const without = JSON.parse((await add("blind")).stdout) as { routes: Array<{ name: string; images?: boolean }> };
    expect(without.routes.find((r) => r.name === "blind")).not.toHaveProperty("images");
    expect(without.routes.find((r) => r.name === "sees")!.images).toBe(true);
  }, 60_000);
});

describe("through a daemon", () => {
  beforeAll(async () => {
    const d = spawnServe(["--data-dir", dataDir, "--workspace", workspace, "serve"]);
    daemon = d.child;
    await d.ready;
  }, 120_000);

  test("displays print live, in order with the output; display get reads the same store", async () => {
    const r = await exec("import sys\nprint('one'); sys.stdout.flush()\ndisplay(Picture(3, 5))\nprint('two')");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toEqual(["one", "<Picture 3x5>", expect.stringMatching(IMAGE_LINE), "two"]);
    const m = IMAGE_LINE.exec(lines[2]!)!;
    const out = join(workspace, "daemon.png");
    expect((await klbr("display", "get", `sha256:${m[3]}`, "-o", out)).code).toBe(0);
    expect(readFileSync(out).readUInt32BE(20)).toBe(5);
  }, 120_000);
});
