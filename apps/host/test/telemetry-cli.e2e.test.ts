// C18 through the real CLI: `klbr serve` says where traces go, `klbr status` counts what was
// exported and dropped, and a daemon whose collector is down works as ever with one warning line.
import type { ChildProcess } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { freePort, startTestJaeger } from "../../../test-support/jaeger.ts";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { tempDir } from "./helpers";
import { spawnServe, stopDaemon } from "./processes";
import { klbrRun, type Run } from "./cli-run";

const { jaeger, skip } = await startTestJaeger();
if (skip) console.warn(skip);
afterAll(async () => {
  await jaeger?.stop();
});

let dataDir: string;
let workspace: string;
let server: ScriptedServer;
let daemon: ChildProcess | null = null;

beforeEach(async () => {
  dataDir = tempDir("klbr-t-");
  workspace = tempDir("klbr-tw-");
  server = await startScriptedServer();
});
afterEach(async () => {
  await stopDaemon(daemon);
  daemon = null;
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

// Without the host's own OTEL_* (the test process's environment must not decide what is tested).
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_")));

function klbr(args: string[]): Promise<Run> {
  return klbrRun(["--data-dir", dataDir, "--workspace", workspace, ...args], { env: cleanEnv() });
}

async function serve(env: Record<string, string>): Promise<{ stderr: () => string }> {
  writeFileSync(join(dataDir, "routes.json"), JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${server.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000 }] }));
  // Ready at the line after "serving": where traces go.
  const started = spawnServe(["--data-dir", dataDir, "--workspace", workspace, "serve"], { env: { ...cleanEnv(), ...env }, readyLine: "klbr: telemetry:" });
  daemon = started.child;
  await started.ready;
  return { stderr: started.stderr };
}

type Counts = { endpoint: string; exported: number; dropped: number; pending: number };

/** `klbr status --json` until its telemetry counts satisfy `done`. */
async function statusUntil(done: (t: Counts) => boolean): Promise<Counts> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await klbr(["status", "--json"]);
    const t = (JSON.parse(r.stdout) as { telemetry: Counts }).telemetry;
    if (done(t)) return t;
    if (Date.now() > deadline) throw new Error(`telemetry counts never settled: ${JSON.stringify(t)}`);
  }
}

// Each test starts a daemon from source and runs several CLI processes: more than the default 20 s on a busy machine.
describe.skipIf(!jaeger)("telemetry through the CLI (C18)", { timeout: 120_000 }, () => {
  test("serve prints where traces go; status shows the spans exported to Jaeger", async () => {
    const daemon = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: jaeger!.otlpHttp, OTEL_BSP_SCHEDULE_DELAY: "50" });
    expect(daemon.stderr()).toContain(`telemetry: traces to ${jaeger!.otlpHttp}/v1/traces (OTLP http/protobuf)`);
    server.push({ text: "One cell.", calls: [{ code: "2+2" }] }, { text: "Done." });
    expect((await klbr(["say", "compute"])).code).toBe(0);
    // A turn, two requests, one cell: four spans, all exported.
    const counts = await statusUntil((t) => t.exported >= 4);
    expect(counts).toMatchObject({ exported: 4, dropped: 0, pending: 0 });
    const text = await klbr(["status"]);
    expect(text.stdout).toContain(`telemetry  traces to ${jaeger!.otlpHttp}/v1/traces: 4 spans exported, 0 dropped, 0 pending`);
    expect(daemon.stderr()).not.toContain("being dropped");
  });

  test("a collector that is down: the session runs, spans are counted as dropped, one warning line on stderr", async () => {
    const port = await freePort();
    const daemon = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_TIMEOUT: "200", OTEL_BSP_SCHEDULE_DELAY: "20" });
    server.push({ text: "a", calls: [{ code: "1" }] }, { text: "b", calls: [{ code: "2" }] }, { text: "done" });
    expect((await klbr(["say", "go"])).code).toBe(0);
    // 1 turn + 3 requests + 2 cells.
    const counts = await statusUntil((t) => t.dropped >= 6);
    expect(counts).toMatchObject({ exported: 0, dropped: 6, pending: 0 });
    const log = await klbr(["log"]);
    expect(log.code).toBe(0);
    expect(daemon.stderr().match(/klbr: telemetry: spans to .* are being dropped/g)).toHaveLength(1);
    expect((await klbr(["status"])).stdout).toContain("0 spans exported, 6 dropped");
  });

  test("without an endpoint: serve says telemetry is off and status says so", async () => {
    const daemon = await serve({});
    expect(daemon.stderr()).toContain("telemetry: off");
    expect((await klbr(["status"])).stdout).toContain("telemetry  off");
  });
});
