// C21 fencing with real processes: the holder of a session is stopped (SIGSTOP) past its lease
// while its cell keeps printing, another host takes the session over, then the stale host is
// continued (SIGCONT). It must write nothing more (every table's rows, overall and for the
// session, are what the new holder left), kill its workbench and say so on stderr. Three hosts on
// one log (SQLite file, then PostgreSQL); the stale host rotates. KLBR_HOSTS_ROUNDS overrides the rounds.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import type { Run } from "./cli-run";
import { alive, HostGroup, LOG_KINDS, pause, within, type ServeHost } from "./hosts-support";

const LEASE_MS = 2_000;
const ROUNDS = Number(process.env.KLBR_HOSTS_ROUNDS ?? 5);

describe.each(LOG_KINDS)("on %s", (kind) => {
  const group = new HostGroup(["--lease", "2s"], undefined, kind);
  const clients: Array<Promise<Run>> = [];

  afterAll(async () => {
    await group.close();
    await Promise.all(clients);
  });

  const holderOf = async (h: ServeHost, sessionId: string): Promise<string | undefined> =>
    ((await group.status(h)).hosts as Array<{ host_id: string; sessions: string[] }>).find((x) => x.sessions.includes(sessionId))?.host_id;

  test(`SIGSTOP of the holder past its lease, x${ROUNDS}: another host takes over; after SIGCONT the stale host writes nothing, kills its workbench and says so`, async () => {
    const hosts = [await group.start(), await group.start(), await group.start()];
    const ids = await Promise.all(hosts.map(async (h) => (await group.status(h)).host_id as string));
    let fenced = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const stale = hosts[i % 3]!;
      const others = hosts.filter((h) => h !== stale);
      const session = `stop-${i}`;
      const marker = join(group.root, `running-${i}`);
      // A cell that keeps printing: while its host is stopped, its output waits in the pipe, and the
      // host reads it after SIGCONT: exactly the writes the fence must refuse.
      clients.push(group.exec(stale, `open(${JSON.stringify(marker)}, "w").close()\nimport time\nfor n in range(6000):\n    print("tick", n, flush=True)\n    time.sleep(0.1)`, session));
      expect(await within(30_000, () => existsSync(marker)), `round ${i}: the cell never ran`).toBe(true);
      const bench = ((await group.status(stale)).workbenches as Array<{ session_id: string; pid: number }>).find((w) => w.session_id === session)!.pid;
      expect(alive(bench)).toBe(true);
      stale.child.kill("SIGSTOP");
      // Another host's failover scan takes the session over (a running cell is pending work).
      const taken = await within(
        LEASE_MS + 3_000,
        async () => (await group.one<{ error: string | null }>("SELECT status, error FROM executions WHERE session_id = ? ORDER BY started_at_ms DESC LIMIT 1", session))?.error === "host_lost",
      );
      expect(taken, `round ${i}: not taken over within ${LEASE_MS + 3_000} ms`).toBe(true);
      const holder = await holderOf(others[0]!, session);
      expect(holder, `round ${i}: the new holder`).toBeDefined();
      expect(holder).not.toBe(ids[i % 3]);
      const newHolder = hosts[ids.indexOf(holder!)]!;
      expect(await within(LEASE_MS + 3_000, () => newHolder.stderr().includes(`session ${session}: taken over from host ${ids[i % 3]}`))).toBe(true);
      const before = await group.tableCounts(session);
      const lostLine = `session ${session}: lease lost (`;
      const lostBefore = stale.stderr().split(lostLine).length;
      stale.child.kill("SIGCONT");
      // The stale host finds its lease gone at its first write or deadline check, and stops the session.
      expect(await within(LEASE_MS + 3_000, () => stale.stderr().split(lostLine).length > lostBefore), `round ${i}: no lease-lost line: ${stale.stderr().slice(-2000)}`).toBe(true);
      expect(await within(LEASE_MS + 3_000, () => !alive(bench)), `round ${i}: the stale workbench ${bench} still runs`).toBe(true);
      const line = stale.stderr().split("\n").find((l) => l.includes(lostLine))!;
      expect(line).toContain("workbench tree killed");
      expect(line).toContain("nothing more is written for it");
      // Let whatever the stale host still had in hand run (it has read its pipe by now), then compare.
      await pause(LEASE_MS);

      expect(await group.tableCounts(session), `round ${i}: rows written after the takeover`).toEqual(before);
      fenced += 1;
    }
    expect(fenced).toBe(ROUNDS);
    // Every host still serves: each runs a cell of its own.
    for (const [n, h] of hosts.entries()) expect((await group.exec(h, "print(6 * 7)", `after-${n}`)).stdout).toContain("42");
  }, 300_000);
});
