// pnpm bench (apps/host), C21: a scripted 20-step turn through a whole host on PostgreSQL against
// the same on SQLite, all with leases (every write fenced, as `klbr serve` runs), measured in this
// one run and interleaved in rounds so a load that comes and goes falls on every mode alike. A turn
// is an operator input, 20 model replies each carrying one cell (`x_i = i`), and a closing reply,
// from the scripted server on loopback; timed from postInput to the turn loop idle. PostgreSQL is
// a throwaway cluster of this run on a Unix socket: durable, and with synchronous_commit off
// (SQLite WAL NORMAL's durability). The target is <= 1.5x.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { postgresMissing, startPostgres } from "../../../test-support/postgres";
import { Host } from "../src/runtime/host";
import { reportModes, storeModes, storeOption, type Mode } from "./pg-modes";

const STEPS = 20;
const ROUNDS = Number(process.env.KLBR_PG_TURN_ROUNDS ?? 8);
const WARMUP = 2;
const LEASE_MS = 10_000;

async function startHost(mode: Mode, root: string, server: ScriptedServer): Promise<Host> {
  const dataDir = mkdtempSync(join(root, "h-"));
  writeFileSync(join(dataDir, "routes.json"), JSON.stringify({ default: "bench", routes: [{ name: "bench", api: "chat", base_url: `${server.url}/v1`, model: "bench-1", api_key_env: null, context_tokens: 10_000_000 }] }));
  return Host.start({
    dataDir,
    workspace: root,
    builtinSkillsDir: join(root, "skills"),
    leaseMs: LEASE_MS,
    telemetry: false,
    drive: { maxCellsPerTurn: 10_000 },
    ...storeOption(mode),
  });
}

/** One scripted 20-step turn on `host`; its wall time in ms. */
async function turn(host: Host, server: ScriptedServer, round: number): Promise<number> {
  for (let i = 0; i < STEPS; i++) server.push({ text: `step ${i}`, calls: [{ code: `x_${i} = ${round * STEPS + i}` }] });
  server.push({ text: "done" });
  const t = process.hrtime.bigint();
  await host.postInput(`round ${round}: run the steps`);
  await host.turns!.idle();
  const took = Number(process.hrtime.bigint() - t) / 1e6;
  if (server.pending() !== 0) throw new Error(`the turn ended with ${server.pending()} scripted replies unused`);
  return took;
}

const missing = postgresMissing();
if (missing) {
  console.log(`pg-turn: skipped (${missing})`);
} else {
  const root = mkdtempSync("/tmp/klbr-pgt-");
  const cluster = await startPostgres({ durable: true });
  const server = await startScriptedServer();
  try {
    const modes = storeModes(cluster);
    const hosts = [];
    for (const mode of modes) hosts.push(await startHost(mode, root, server));
    const figures = modes.map(() => [] as number[]);
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const [i, host] of hosts.entries()) {
        const took = await turn(host, server, round);
        if (round >= WARMUP) figures[i]!.push(took);
      }
    }
    for (const host of hosts) await host.stop();
    console.log(`a scripted ${STEPS}-step turn (postInput to idle, one cell a step), ${ROUNDS} rounds interleaved after ${WARMUP} warm-up, each host holding its session's lease:`);
    reportModes(modes, figures, { name: "max", of: (xs) => Math.max(...xs) });
  } finally {
    await server.close();
    await cluster.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
