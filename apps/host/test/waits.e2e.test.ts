import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { hostRequests, waits } from "../src/db/schema";
import type { Notification } from "../src/requests/context";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

// Through real cells with a fixed host clock: deadline_ms is exactly now + seconds * 1000.
const NOW = 1_800_000_000_000;
let host: Host;
let close: () => Promise<void>;
const events: Notification[] = [];
beforeAll(async () => {
  ({ host, close } = await startTestHost({ now: () => NOW }));
  host.subscribe((n) => events.push(n));
});
afterAll(async () => close());

const lastWait = () => host.db.select().from(waits).orderBy(desc(waits.createdAtMs), desc(waits.id)).limit(1).get()!;

describe("runtime.wait end to end", () => {
  test("fractional seconds: the reply's deadline_ms is exact to the millisecond", async () => {
    const r = await host.execute("w = await runtime.wait(1.5, reason='fractional')", "frac");
    expect(r.status).toBe("yielded");
    const row = lastWait();
    expect(row).toMatchObject({ reason: "fractional", seconds: 1.5, deadlineMs: NOW + 1500 });
    const [request] = host.db.select().from(hostRequests).where(eq(hostRequests.method, "runtime.wait")).orderBy(desc(hostRequests.id)).limit(1).all();
    expect(request!.reply).toMatchObject({ kind: "ok", value: { wait_id: row.id, deadline_ms: NOW + 1500, pending_input: false } });
    await host.execute("await runtime.wait(0.001, reason='one ms')", "frac");
    expect(lastWait()).toMatchObject({ deadlineMs: NOW + 1 });
  });

  test("a cell that catches WaitYield and clears the worker's yielded flag still completes yielded: its wait is open (C8 amended, issue 19 item 8)", async () => {
    const code = [
      "from klbr.runtime import WaitYield, current_scope",
      "try:",
      "    await runtime.wait(None, reason='un-yield me')",
      "except WaitYield:",
      "    current_scope.get().yielded = False",
      "'caught'",
    ].join("\n");
    const r = await host.execute(code, "unyield");
    expect(r.status).toBe("yielded");
    expect(lastWait()).toMatchObject({ sessionId: "unyield", reason: "un-yield me", state: "waiting" });
    // An interrupted or failing end after an accepted wait is recorded yielded too: the host accepted it.
    const raising = await host.execute("from klbr.runtime import WaitYield, current_scope\ntry:\n    await runtime.wait(None, reason='then raise')\nexcept WaitYield:\n    current_scope.get().yielded = False\n    raise ValueError('after the wait')", "unyield");
    expect(raising.status).toBe("yielded");
  });

  test("three waits of a session leave one open; one operator input wakes it and its text is shown once", async () => {
    for (let i = 0; i < 3; i++) expect((await host.execute(`await runtime.wait(None, reason='w${i}')`, "pile")).status).toBe("yielded");
    const rows = host.db.select().from(waits).where(eq(waits.sessionId, "pile")).all();
    expect(rows.map((w) => w.state).sort()).toEqual(["superseded", "superseded", "waiting"]);
    events.length = 0;
    await host.postInput("only once", { sessionId: "pile" });
    const wakes = events.filter((e) => e.type === "wake");
    expect(wakes).toHaveLength(1);
    const shown = wakes.flatMap((w) => (w as { inputs: string[] }).inputs).filter((t) => t.includes("only once"));
    expect(shown).toHaveLength(1);
  });
});
