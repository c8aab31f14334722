// pnpm bench (apps/host), C21: `host.execute('1+1')` through a whole host on PostgreSQL against the
// same on SQLite, both with leases (every write fenced, as `klbr serve` runs), measured in this one
// run, interleaved in rounds so a load that comes and goes falls on every mode alike. PostgreSQL is
// a throwaway cluster of this run on a Unix socket: durable (fsync, synchronous_commit on) and with
// synchronous_commit off (SQLite WAL NORMAL's durability). The target is <= 1.5x.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { postgresMissing, startPostgres } from "../../../test-support/postgres";
import { Host } from "../src/runtime/host";
import { percentile } from "./figures";
import { reportModes, storeModes, storeOption, type Mode } from "./pg-modes";

const ROUNDS = 5;
const PER_ROUND = 100;
const LEASE_MS = 10_000;

async function startHost(mode: Mode, root: string): Promise<Host> {
  const dataDir = mkdtempSync(join(root, "h-"));
  return Host.start({ dataDir, workspace: root, leaseMs: LEASE_MS, telemetry: false, ...storeOption(mode) });
}

async function samples(host: Host, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await host.execute("1+1");
    into.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
}

const missing = postgresMissing();
if (missing) {
  console.log(`pg-host: skipped (${missing})`);
} else {
  const root = mkdtempSync("/tmp/klbr-pgh-");
  const cluster = await startPostgres({ durable: true });
  try {
    const modes = storeModes(cluster);
    const hosts = [];
    for (const mode of modes) hosts.push(await startHost(mode, root));
    const figures = modes.map(() => [] as number[]);
    // Warm-up: the workbench, the pools, the prepared statements.
    for (const host of hosts) await samples(host, 20, []);
    for (let round = 0; round < ROUNDS; round++) for (const [i, host] of hosts.entries()) await samples(host, PER_ROUND, figures[i]!);
    for (const host of hosts) await host.stop();
    console.log(`host.execute('1+1'), ${ROUNDS} x ${PER_ROUND} interleaved, each host holding its session's lease:`);
    reportModes(modes, figures, { name: "p99", of: (xs) => percentile(xs, 99) });
  } finally {
    await cluster.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
