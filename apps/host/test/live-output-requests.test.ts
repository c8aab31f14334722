// C16: live output changes nothing a model request holds. The same scripted session runs on a host
// with live output and on one without; every request body is the same bytes, once the only parts
// that differ between any two runs (the wall-clock stamps and the cells' measured durations) are
// masked. A client watches the first host's session, so its cells really streamed.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import type { LiveOutputEvent } from "../src/cli/live-output";
import { startTestHost, tempDir } from "./helpers";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const SCRIPT = () => [
  { text: "Printing.", calls: [{ code: "for i in range(3):\n    print('line', i)\nimport sys\nprint('warn', file=sys.stderr)\n'done'" }] },
  { text: "Again.", calls: [{ code: "print('x' * 70000)" }] },
  { text: "Finished." },
];

async function session(liveOutput: boolean): Promise<{ bodies: string[]; streamed: LiveOutputEvent[] }> {
  const server: ScriptedServer = await startScriptedServer();
  closers.push(() => server.close());
  server.push(...SCRIPT());
  const dataDir = tempDir();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${server.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000 }] }),
  );
  const t = await startTestHost({ dataDir, drive: true, liveOutput, now: () => 1_800_000_000_000 });
  closers.push(t.close);
  const streamed: LiveOutputEvent[] = [];
  t.host.liveOutput?.watch({ sessionId: "root" }, (event) => streamed.push(event));
  await t.host.postInput("print some lines");
  await t.host.turns!.idle();
  return { bodies: server.requests.map((r) => r.body), streamed };
}

const mask = (body: string) => body.replace(/\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ · ran [^\]]*\]/g, "[STAMP · ran DURATION]");

test("the model's requests are byte-identical with and without live output", async () => {
  const live = await session(true);
  const quiet = await session(false);
  expect(live.streamed.map((e) => e.text).join("")).toContain("line 0\nline 1\nline 2\n");
  expect(quiet.streamed).toEqual([]);
  expect(live.bodies).toHaveLength(3);
  expect(live.bodies.map(mask)).toEqual(quiet.bodies.map(mask));
});
