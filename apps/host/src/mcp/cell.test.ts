import { describe, expect, test } from "vitest";
import type { ControlClient } from "../control/client";
import { runCell } from "./cell";
import type { DaemonLink } from "./daemon";

/**
 * A control connection that answers as the daemon does, in the order requests are written: an
 * interrupt of an execution it has not been asked to run is `not_running` (and that cell then runs
 * unbounded); one it has been asked to run ends it, interrupted.
 */
function fakeDaemon() {
  const written: string[] = [];
  const execs = new Map<string, (reply: unknown) => void>();
  const client = {
    request(op: { op: string; execution_id?: string }) {
      written.push(op.op);
      if (op.op === "exec") return new Promise((resolve) => execs.set(op.execution_id!, resolve));
      if (op.op === "interrupt") {
        const finish = execs.get(op.execution_id!);
        if (!finish) return Promise.resolve({ rung: "not_running" });
        finish({ id: op.execution_id, session_id: "s", status: "interrupted", output: [], truncated_bytes: 0, error: "KeyboardInterrupt", ended_by: "message", started_at_ms: 0, ended_at_ms: 1 });
        return Promise.resolve({ execution_id: op.execution_id, rung: "message" });
      }
      return Promise.reject(new Error(`unexpected ${op.op}`));
    },
    listen: () => () => undefined,
  } as unknown as ControlClient;
  const link = { client: () => Promise.resolve(client) } as unknown as DaemonLink;
  return { link, written };
}

describe("runCell", () => {
  test("a call cancelled before its exec was sent: the exec goes first, so the interrupt reaches the cell", async () => {
    const { link, written } = fakeDaemon();
    const abort = new AbortController();
    // Cancelled while the connection to the daemon was being made (link.client() pending).
    abort.abort();
    const result = await runCell(link, { code: "while True: pass" }, "s", { signal: abort.signal, sendNotification: () => Promise.resolve() });
    expect(written).toEqual(["exec", "interrupt"]);
    expect(result.isError).toBe(true);
    expect((result._meta?.["klbr/execution"] as { status: string }).status).toBe("interrupted");
  });

  test("a call cancelled while its cell runs interrupts it once", async () => {
    const { link, written } = fakeDaemon();
    const abort = new AbortController();
    const call = runCell(link, { code: "while True: pass" }, "s", { signal: abort.signal, sendNotification: () => Promise.resolve() });
    await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    const result = await call;
    expect(written).toEqual(["exec", "interrupt"]);
    expect(result.content.at(-1)).toEqual({ type: "text", text: "[the client cancelled the call: the cell was interrupted]" });
  });
});
