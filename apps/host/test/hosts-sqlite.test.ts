// C21 with real processes: `klbr serve` hosts sharing one log (a SQLite file by --sqlite-file, then
// a PostgreSQL database by --database), each with its own data directory. Registration and status, SESSION_HELD_ELSEWHERE, kill -9 of the holder
// mid-cell. Times are bounds polled with a deadline.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { klbrRun } from "./cli-run";
import { alive, HostGroup, LOG_KINDS, pause, within, type ServeHost } from "./hosts-support";

const LEASE_MS = 2_000;
let group: HostGroup | null = null;

afterEach(async () => {
  await group?.close();
  group = null;
});

const rootPid = async (g: HostGroup, h: ServeHost): Promise<number> => (await g.status(h)).workbenches.find((w: { session_id: string }) => w.session_id === "root").pid as number;

/** Start a cell on `h` that marks a file once running and then sleeps; resolves once it runs. */
async function longCell(g: HostGroup, h: ServeHost, name: string): Promise<void> {
  const marker = join(g.root, name);
  void g.exec(h, `open(${JSON.stringify(marker)}, "w").close()\nimport time\ntime.sleep(600)`);
  expect(await within(30_000, () => existsSync(marker))).toBe(true);
}

const execution = (g: HostGroup, marker: string) =>
  g.all<{ id: string; status: string; error: string | null; ended_by: string | null; generation: string }>("SELECT id, status, error, ended_by, generation FROM executions WHERE code LIKE ?", `%${marker}%`);

describe.each(LOG_KINDS)("many hosts on one %s log (C21)", (kind) => {
  test("status lists every host with its heartbeat and the sessions it holds; a session held elsewhere is refused naming its holder", async () => {
    group = new HostGroup(["--lease", "2s"], undefined, kind);
    const a = await group.start();
    const b = await group.start();
    const sa = await group.status(a);
    const sb = await group.status(b);
    expect(sa.host_id).not.toBe(sb.host_id);
    expect(sb.lease_ms).toBe(LEASE_MS);
    // One active behaviour revision for both: A activated it, B runs it from its own releases (made from the log's stored release).
    expect(sb.hooks).toMatchObject({ epoch: 1, revision: sa.hooks.revision, state: sa.hooks.state });
    expect(readdirSync(join(b.dataDir, "releases"))).toEqual([sa.hooks.revision]);
    expect(sb.hosts).toHaveLength(2);
    const seen = Object.fromEntries((sb.hosts as Array<Record<string, any>>).map((h) => [h.host_id, h]));
    expect(seen[sa.host_id]).toMatchObject({ alive: true, this_host: false, sessions: ["root"], address: join(a.dataDir, "klbr.sock") });
    expect(seen[sb.host_id]).toMatchObject({ alive: true, this_host: true, sessions: [] });
    // The heartbeat moves on (every 2 s).
    const first = seen[sa.host_id].heartbeat_at_ms as number;
    expect(await within(6_000, async () => ((await group!.status(b)).hosts as Array<Record<string, any>>).find((h) => h.host_id === sa.host_id)!.heartbeat_at_ms > first)).toBe(true);

    const refused = await group.exec(b, "print(1)");
    expect(refused.code).toBe(75);
    expect(refused.stderr).toContain("SESSION_HELD_ELSEWHERE");
    expect(refused.stderr).toContain(sa.host_id);
    const said = await klbrRun(["--data-dir", b.dataDir, "say", "hello"]);
    expect(said.stderr).toContain("SESSION_HELD_ELSEWHERE");

    // A session of its own: B claims it, and status says so on both hosts.
    const own = await group.exec(b, "print(40 + 2)", "s-b");
    expect(own.stdout).toContain("42");
    const after = (await group.status(a)).hosts as Array<Record<string, any>>;
    expect(after.find((h) => h.host_id === sb.host_id)!.sessions).toEqual(["s-b"]);
    const text = await klbrRun(["--data-dir", a.dataDir, "status"]);
    expect(text.stdout).toMatch(new RegExp(`host +${sa.host_id} \\(this host\\) alive, last heartbeat \\S+, holds root`));
    expect(text.stdout).toMatch(new RegExp(`host +${sb.host_id} alive, last heartbeat \\S+, holds s-b`));
  }, 90_000);

  test("kill -9 of the holder mid-cell: another host takes the session over within lease + 3 s; the cell failed host_lost once; the next generation is host_failover; the dead host's workers are gone", async () => {
    group = new HostGroup(["--lease", "2s"], undefined, kind);
    const a = await group.start();
    const b = await group.start();
    const bench = await rootPid(group, a);
    await longCell(group, a, "k9-running");
    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    await a.exited;
    // Pending work (a running cell) whose lease expired: B's failover scan claims it, unasked.
    const failed = await within(LEASE_MS + 3_000, async () => (await execution(group!, "k9-running"))[0]?.status === "failed");
    const tookMs = Date.now() - killedAt;
    expect(failed, `not taken over within ${LEASE_MS + 3_000} ms`).toBe(true);
    expect(await execution(group, "k9-running")).toEqual([expect.objectContaining({ status: "failed", error: "host_lost", ended_by: "host_lost" })]);
    expect(await within(5_000, () => !alive(bench))).toBe(true);
    const sb = await group.status(b);
    expect((sb.hosts as Array<Record<string, any>>).find((h) => h.this_host)!.sessions).toContain("root");
    // The next cell runs on B in a new generation that says why (the namespace is on the dead host).
    const next = await group.exec(b, "print('on b')");
    expect(next.stdout).toContain("on b");
    const resets = await group.all<{ generation: string; reason: string }>("SELECT generation, reason FROM kernel_resets WHERE session_id = 'root' ORDER BY id");
    expect(resets.map((r) => r.reason)).toEqual(["host_start", "host_failover"]);
    expect(b.stderr()).toContain("session root: taken over from host");
    expect(tookMs).toBeLessThan(LEASE_MS + 3_000);
  }, 90_000);
});

test("bad --lease values are a usage error naming the value", async () => {
  for (const bad of ["10", "0s", "2h", "soon"]) {
    const run = await klbrRun(["--data-dir", join(new HostGroup().root, "x"), "serve", "--lease", bad]);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("CLI_USAGE");
    expect(run.stderr).toContain(JSON.stringify(bad));
  }
}, 60_000);
