import { describe, expect, it } from "vitest";
import { CellSlot } from "./cells.js";
import type { CellCompletion, InterruptRung } from "./completion.js";
import { climbLadder } from "./ladder.js";
import { Operation } from "./operation.js";
import { DEFAULTS } from "./options.js";
import type { CompletedResult } from "./wire.js";

const cellResult = (status: "ok" | "error" | "yielded" | "interrupted"): CompletedResult => ({
  kind: "cell",
  status,
  output: [],
  truncated_bytes: 0,
  error: status === "error" ? "Traceback" : null,
});

/**
 * A running cell `c-1` and a ladder over a scripted worker: `onRung` says what the worker does as
 * each rung is sent (complete the cell with a result, or nothing), and every rung sent is kept.
 */
function ladder(onRung: (rung: InterruptRung, slot: CellSlot) => void) {
  const slot = new CellSlot();
  const op = new Operation<CellCompletion>("c-1");
  slot.begin(op, undefined);
  const sent: InterruptRung[] = [];
  const act = (rung: InterruptRung) => {
    sent.push(rung);
    onRung(rung, slot);
  };
  const scope = {
    config: { ...DEFAULTS, interruptGraceMs: 30, sigintGraceMs: 30 },
    sendInterrupt: () => act("message"),
    sigint: () => act("sigint"),
    hardStop: async () => {
      act("hard_stop");
      slot.endOnDeath({ reason: "interrupt_escalated", detail: "test", kind: "requested" }, { code: null, signal: "SIGKILL", reason: "interrupt_escalated", tails: { stdout: "", stderr: "" } });
    },
  };
  return { op, sent, outcome: climbLadder(op, scope) };
}

const complete = (slot: CellSlot, status: "ok" | "error" | "yielded" | "interrupted") => {
  const run = slot.run!;
  if (status === "yielded") run.waitAccepted = true;
  expect(slot.complete(run, cellResult(status), false)).toBeUndefined();
};

describe("the interrupt ladder's record (issue 38, item 1)", () => {
  it("a cell the message rung interrupts is recorded as ended by that rung", async () => {
    const l = ladder((rung, slot) => rung === "message" && complete(slot, "interrupted"));
    const outcome = await l.outcome;
    expect(outcome).toMatchObject({ rung: "message", completion: { status: "interrupted", endedBy: "message" } });
    expect(l.sent).toEqual(["message"]);
  });

  it("a cell the SIGINT rung interrupts is recorded as ended by SIGINT", async () => {
    const l = ladder((rung, slot) => rung === "sigint" && complete(slot, "interrupted"));
    expect(await l.outcome).toMatchObject({ rung: "sigint", completion: { status: "interrupted", endedBy: "sigint" } });
    expect(l.sent).toEqual(["message", "sigint"]);
  });

  it.each(["ok", "error", "yielded"] as const)(
    "a cell that completes %s while a rung is in force finished on its own: ended_by worker, never a rung",
    async (status) => {
      // The kick cut a C call short and the cell's own code went on to its end (the blocked-SIGINT
      // cell of issue 38): no rung ended it, so none may be recorded.
      const l = ladder((rung, slot) => rung === "message" && complete(slot, status));
      const outcome = await l.outcome;
      expect(outcome.completion).toMatchObject({ status, endedBy: "worker" });
      expect(outcome.rung).toBe("completed");
      expect(l.sent).toEqual(["message"]);
    },
  );

  it("a worker's own failed completion during the ladder is not a rung's doing either", async () => {
    const l = ladder((rung, slot) => {
      if (rung === "sigint") slot.complete(slot.run!, { kind: "failed", error: "boom" }, false);
    });
    const outcome = await l.outcome;
    expect(outcome.completion).toMatchObject({ kind: "failed", endedBy: "worker" });
    expect(outcome.rung).toBe("completed");
  });

  it("a cell whose code goes on running is taken up every rung to the hard stop", async () => {
    const l = ladder(() => undefined);
    expect(await l.outcome).toMatchObject({ rung: "hard_stop", completion: { status: "interrupted", endedBy: "hard_stop" } });
    expect(l.sent).toEqual(["message", "sigint", "hard_stop"]);
  });

  it("a completion during a graceful shutdown stays shutdown's, interrupted or not", () => {
    for (const status of ["ok", "interrupted"] as const) {
      const slot = new CellSlot();
      const op = new Operation<CellCompletion>("c-1");
      slot.begin(op, undefined);
      slot.complete(slot.run!, cellResult(status), true);
      expect(op.result).toMatchObject({ status, endedBy: "shutdown" });
    }
  });
});
