import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Host } from "../src/runtime/host";
import { resultOf, startTestHost } from "./helpers";
import { sleepers } from "./processes";

let host: Host;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ host, close } = await startTestHost());
});

afterAll(async () => {
  await close();
});

async function run(args: string): Promise<string | undefined> {
  const r = await host.execute(`o = await runtime.run(${args})\n(o['exit_code'], o['signal'], o['timed_out'], o['stdout'], o['duration_ms'])`);
  expect(r.status, JSON.stringify(r)).toBe("ok");
  return resultOf(r);
}

async function code(args: string): Promise<string | undefined> {
  const r = await host.execute(`try:\n    await runtime.run(${args})\n    c = 'ok'\nexcept Exception as e:\n    c = e.code\nc`);
  return resultOf(r);
}

describe("workspace.run is bounded by its timeout and leaves nothing running (issue 10, item 2)", () => {
  test("a setsid'd daemon holding the pipes neither delays the reply nor survives", async () => {
    const started = Date.now();
    const r = await run(`['sh', '-c', '(setsid sleep 1515 &); echo started'], timeout_ms=2000`);
    expect(Date.now() - started).toBeLessThan(2000 + 1500);
    expect(r).toMatch(/^\(0, None, False, 'started\\n', \d+\)$/);
    expect(sleepers("1515")).toEqual([]);
  });

  test("a setsid'd daemon with its stdio closed does not survive either", async () => {
    const r = await run(`['sh', '-c', '(setsid sleep 1516 </dev/null >/dev/null 2>&1 &); echo started'], timeout_ms=2000`);
    expect(r).toMatch(/^\(0, None, False, 'started\\n', \d+\)$/);
    expect(sleepers("1516")).toEqual([]);
  });

  test("a command still running at its timeout is killed: exit_code null, timed_out true, in time", async () => {
    const started = Date.now();
    const r = await run(`['sh', '-c', '(setsid sleep 1517 &); echo started; exec sleep 1517'], timeout_ms=700`);
    expect(Date.now() - started).toBeLessThan(700 + 1500);
    expect(r).toMatch(/^\(None, 'SIGKILL', True, 'started\\n', \d+\)$/);
    expect(sleepers("1517")).toEqual([]);
  });
});

describe("workspace.run refuses what no process can start with (issue 10, item 21)", () => {
  test.each([
    ["a NUL in argv[0]", `['ec\\x00ho', 'x']`],
    ["a NUL in an argument", `['echo', 'a\\x00b']`],
    ["a NUL in an env value", `['true'], env={'A': 'x\\x00y'}`],
    ["a NUL in an env name", `['true'], env={'A\\x00B': 'x'}`],
    ["an env name holding =", `['true'], env={'A=B': 'x'}`],
    ["an empty env name", `['true'], env={'': 'x'}`],
    ["an empty argv[0]", `['']`],
  ])("%s is invalid_request", async (_name, args) => {
    expect(await code(args)).toBe("'invalid_request'");
  });

  test("a program that does not exist is still not_found", async () => {
    expect(await code(`['klbr-no-such-program-x']`)).toBe("'not_found'");
  });

  test("750,000 control characters of output fill the frame and the cut is counted", async () => {
    const r = await host.execute(
      "o = await runtime.run(['python3', '-c', 'import sys; sys.stdout.write(\"\\\\x01\" * 750000)'])\n(o['exit_code'], len(o['stdout']), o['truncated_bytes'])",
    );
    const [exit, kept, cut] = JSON.parse(`[${resultOf(r)!.slice(1, -1)}]`) as number[];
    expect(exit).toBe(0);
    expect(kept).toBeGreaterThan(166_000);
    expect(kept! + cut!).toBe(750_000);
  });
});
