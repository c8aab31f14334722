import type { Channel } from "./channel.js";
import type { EndedBy, HookCompletion, WorkerExit } from "./completion.js";
import type { Operation } from "./operation.js";
import type { WorkerConfig } from "./options.js";
import { hostFailure, messageOf, type StopInfo } from "./records.js";
import { parseHookResult, type CompletedResult, type HookSlot, type OutboundMessage } from "./wire.js";

/** One invoke: queued, then in flight with a timer for what is left of its budget. */
export interface HookCall {
  op: Operation<HookCompletion>;
  slot: HookSlot;
  input: unknown;
  /** performance.now() by which the call must complete: monotonic, unlike the Date.now() records. */
  deadline: number;
  timer?: NodeJS.Timeout;
}

/** What the hook queue needs from its worker. */
export interface HookScope {
  readonly config: WorkerConfig;
  running(): boolean;
  channel(): Channel | undefined;
  invalidate(reason: string, detail: string): void;
}

/** A hooks worker's invokes: one in flight, the rest queued, each within its budget from submission. */
export class HookCalls {
  readonly #scope: HookScope;
  readonly #queue: HookCall[] = [];
  #inFlight: HookCall | undefined;

  constructor(scope: HookScope) {
    this.#scope = scope;
  }

  get inFlight(): HookCall | undefined {
    return this.#inFlight;
  }

  /** True when an invoke with this id is in flight or queued. */
  has(id: string): boolean {
    return this.#inFlight?.op.id === id || this.#queue.some((c) => c.op.id === id);
  }

  /** Queue an invoke (refused when the queue is full) and send what can be sent. */
  submit(op: Operation<HookCompletion>, slot: HookSlot, input: unknown): void {
    const { invokeQueueLimit, invokeBudgetMs } = this.#scope.config;
    if (this.#queue.length >= invokeQueueLimit) {
      op.settle(hostFailure(op, "queue_full", `${this.#queue.length} invokes are already waiting`));
      return;
    }
    this.#queue.push({ op, slot, input, deadline: performance.now() + invokeBudgetMs });
    this.pump();
  }

  /** Send the next queued invoke once none is in flight; one whose budget ran out queued fails. */
  pump(): void {
    const budget = this.#scope.config.invokeBudgetMs;
    while (!this.#inFlight && this.#queue.length > 0 && this.#scope.running()) {
      const call = this.#queue.shift()!;
      const remaining = call.deadline - performance.now();
      if (remaining <= 0) {
        call.op.settle(hostFailure(call.op, "hook_timeout", `the ${budget} ms budget ran out in the queue`));
        continue;
      }
      try {
        this.#scope.channel()!.send({ kind: "invoke", id: call.op.id, slot: call.slot, input: call.input } as OutboundMessage);
      } catch (err) {
        call.op.settle(hostFailure(call.op, "invalid_input", `invoke ${JSON.stringify(call.op.id)} cannot be sent: ${messageOf(err)}`));
        continue;
      }
      this.#inFlight = call;
      call.timer = setTimeout(() => {
        if (this.#inFlight === call) {
          this.#scope.invalidate("hook_timeout", `invoke ${JSON.stringify(call.op.id)} overran its ${budget} ms budget`);
        }
      }, remaining);
    }
  }

  /** Settle the in-flight `call` with the worker's `result`, then send the next. */
  complete(call: HookCall, result: CompletedResult): void {
    clearTimeout(call.timer);
    const op = call.op;
    // A hook's interrupt ends it as a failed completion; a decision it still returned is its own.
    const byRung = result.kind === "failed" ? op.rung : undefined;
    const base = { id: op.id, startedAt: op.startedAt, endedAt: Date.now(), endedBy: (byRung ?? "worker") as EndedBy };
    if (result.kind === "cell") {
      this.#scope.invalidate("protocol_violation", `a cell result completed hook call ${JSON.stringify(op.id)}`);
      return;
    }
    this.#inFlight = undefined;
    if (result.kind === "failed") {
      op.settle({ ...base, kind: "failed", source: "worker", error: result.error, reason: "worker_failed", exit: null, tails: null });
    } else {
      try {
        const value = parseHookResult(call.slot, result.value);
        op.settle({ ...base, kind: "hook", source: "worker", value });
      } catch (err) {
        op.settle({
          ...base,
          kind: "failed",
          source: "worker",
          error: `invalid ${call.slot} result: ${messageOf(err)}`,
          reason: "invalid_result",
          exit: null,
          tails: null,
        });
      }
    }
    this.pump();
  }

  /** The worker is gone: fail the call in flight and every queued one. */
  failAll(stop: StopInfo, exit: WorkerExit): void {
    const calls = [...(this.#inFlight ? [this.#inFlight] : []), ...this.#queue.splice(0)];
    this.#inFlight = undefined;
    for (const call of calls) {
      clearTimeout(call.timer);
      call.op.settle(hostFailure(call.op, stop.reason, stop.detail, exit));
    }
  }
}
