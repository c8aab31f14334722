import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Host } from "../src/runtime/host";
import { passEnvNames } from "../src/runtime/leftovers";
import { startTestHost } from "./helpers";

function stdoutOf(r: { output: Array<{ stream: string; text: string }> }): string {
  return r.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
}

let host: Host;
let close: () => Promise<void>;

beforeAll(async () => {
  process.env.KLBR_TEST_DAEMON_SECRET = "s3cret";
  process.env.KLBR_TEST_PASSED = "by-option";
  process.env.KLBR_TEST_PASSED_ENV = "by-env";
  process.env.KLBR_PASS_ENV = "KLBR_TEST_PASSED_ENV, ";
  try {
    ({ host, close } = await startTestHost({ passEnv: ["KLBR_TEST_PASSED"] }));
  } finally {
    delete process.env.KLBR_PASS_ENV;
  }
});

afterAll(async () => {
  await close();
  delete process.env.KLBR_TEST_DAEMON_SECRET;
  delete process.env.KLBR_TEST_PASSED;
  delete process.env.KLBR_TEST_PASSED_ENV;
});

const ALLOWED = /^(PATH|HOME|LANG|LC_\w+|TZ|TMPDIR|PYTHONPATH|KLBR_TREE|KLBR_HOST_TREE|KLBR_TEST_PASSED|KLBR_TEST_PASSED_ENV)$/;

describe("what the host starts gets the C15 minimal environment (issue 10, item 5)", () => {
  test("the workbench: no secret of the daemon's, the passed names, nothing else", async () => {
    const r = await host.execute("import os, json\nprint(json.dumps(dict(os.environ)))");
    const env = JSON.parse(stdoutOf(r)) as Record<string, string>;
    expect(env.KLBR_TEST_DAEMON_SECRET).toBeUndefined();
    expect(env.KLBR_TEST_PASSED).toBe("by-option");
    expect(env.KLBR_TEST_PASSED_ENV).toBe("by-env");
    expect(env.KLBR_HOST_TREE).toMatch(/^[0-9a-f]{32}$/);
    expect(Object.keys(env).filter((name) => !ALLOWED.test(name))).toEqual([]);
  });

  test("workspace.run: the cell's env applies over the same minimal base", async () => {
    const r = await host.execute("o = await runtime.run(['env'], env={'EXTRA': '1', 'PATH': '/usr/bin:/bin'})\nprint(o['stdout'], end='')");
    const lines = stdoutOf(r).split("\n").filter(Boolean);
    const env = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    expect(env.KLBR_TEST_DAEMON_SECRET).toBeUndefined();
    expect(env.EXTRA).toBe("1");
    expect(env.PATH).toBe("/usr/bin:/bin");
    expect(env.HOME).toBe(process.env.HOME);
    expect(env.KLBR_TEST_PASSED).toBe("by-option");
    expect(Object.keys(env).filter((name) => !ALLOWED.test(name) && name !== "EXTRA")).toEqual([]);
  });

  test("KLBR_PASS_ENV is comma-separated; names from both sources are kept once", () => {
    expect(passEnvNames(["A", "B"], " B,C ,,")).toEqual(["A", "B", "C"]);
    expect(passEnvNames([], undefined)).toEqual([]);
  });
});
