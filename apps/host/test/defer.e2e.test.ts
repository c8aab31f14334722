import { eq } from "drizzle-orm";
import { afterEach, describe, expect, test } from "vitest";
import { waits } from "../src/db/schema";
import type { HookOutcome, Notification } from "../src/requests/context";
import type { Host } from "../src/runtime/host";
import { getEvent } from "../src/store/events";
import { startTestHost, tempDir } from "./helpers";

// attention.plan's answer comes from the behaviour release; these tests make it answer `defer` by
// replacing the hooks service's call on the instance, so the rest of the path is the host's own.
function deferring(host: Host, seconds: number): void {
  (host.hooks as unknown as { invoke: () => Promise<HookOutcome> }).invoke = async () => ({ ok: true, value: { action: "defer", seconds }, revision: "test" });
}
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});
function nextNotification(host: Host, match: (n: Notification) => boolean): Promise<Notification> {
  return new Promise((resolve) => {
    const off = host.subscribe((n) => {
      if (match(n)) {
        off();
        resolve(n);
      }
    });
  });
}

describe("attention.plan defer (C8): the input wakes its session when the seconds pass", () => {
  test("a deferred input does not wake the open wait at once, and wakes it when due", async () => {
    const t = await startTestHost();
    stops.push(t.close);
    const { host } = t;
    expect((await host.execute("await runtime.wait(None, reason='until something comes')")).status).toBe("yielded");
    deferring(host, 0.3);
    const woke = nextNotification(host, (n) => n.type === "wake");
    const deferred = nextNotification(host, (n) => n.type === "deferred");
    const input = await host.postInput("later please", { source: "discord.dm" });
    const effective = (input.attention as { effective: { action: string; due_at_ms: number } }).effective;
    expect(effective).toMatchObject({ action: "defer", seconds: 0.3 });
    expect(getEvent(host.db, input.event_id)!.consumedAtMs).toBeNull();
    expect(host.db.select().from(waits).where(eq(waits.state, "waiting")).all()).toHaveLength(1);
    expect(await woke).toMatchObject({ type: "wake", woken_by: `deferred:event:${input.event_id}`, inputs: [expect.stringContaining("later please")] });
    expect(await deferred).toMatchObject({ type: "deferred", event_id: input.event_id });
    expect(host.db.select().from(waits).where(eq(waits.state, "waiting")).all()).toHaveLength(0);
    expect(getEvent(host.db, input.event_id)!.consumedAtMs).not.toBeNull();
  });

  test("a deferred input is not pending for a new wait before it is due", async () => {
    const t = await startTestHost();
    stops.push(t.close);
    deferring(t.host, 600);
    await t.host.postInput("in ten minutes", { source: "discord.dm" });
    await t.host.execute("await runtime.wait(None, reason='x')");
    expect(t.host.db.select().from(waits).all()).toEqual([expect.objectContaining({ state: "waiting", pendingInput: false })]);
  });

  test("durably: a host restart in between still wakes the session when (or as soon as) it is due", async () => {
    const dataDir = tempDir();
    const workspace = tempDir("klbr-w-");
    let now = 1_800_000_000_000;
    const first = await startTestHost({ dataDir, workspace, now: () => now });
    deferring(first.host, 60);
    expect((await first.host.execute("await runtime.wait(None, reason='across a restart')")).status).toBe("yielded");
    const input = await first.host.postInput("after the restart", { source: "discord.dm" });
    await first.host.stop();
    now += 61_000; // the host was down while the input came due
    const second = await startTestHost({ dataDir, workspace, now: () => now });
    stops.push(second.close);
    const woke = new Promise<void>((resolve) => {
      const check = () => second.host.db.select().from(waits).where(eq(waits.state, "woken")).all().length > 0;
      const poll = setInterval(() => check() && (clearInterval(poll), resolve()), 10);
    });
    await woke;
    const [wait] = second.host.db.select().from(waits).all();
    expect(wait).toMatchObject({ state: "woken", wokenBy: `deferred:event:${input.event_id}` });
  });
});
