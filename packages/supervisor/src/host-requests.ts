import type { CellRun } from "./cells.js";
import type { Channel } from "./channel.js";
import type { CellCompletion } from "./completion.js";
import type { InboundOf } from "./inbound.js";
import type { Operation } from "./operation.js";
import type { HostRequestContext, StartWorkerOptions, WorkerRole } from "./options.js";
import { messageOf, replyCode } from "./records.js";
import { MAX_REQUESTS_PER_CELL, parseHostRequest, type HostReplyBody, type HostRequest } from "./wire.js";

/** What host requests need from their worker. */
export interface RequestScope {
  readonly role: WorkerRole;
  /** True while the worker runs: not starting, stopping or dead. */
  running(): boolean;
  /** The running cell, if any. */
  cell(): CellRun | undefined;
  channel(): Channel | undefined;
  invalidate(reason: string, detail: string): void;
}

type RequestMessage = InboundOf<"host_request">;

/** Call `fn` synchronously; its value, promise or throw becomes one promise. */
const settleWith = <T>(fn: () => T | Promise<T>): Promise<T> => new Promise<T>((resolve) => resolve(fn()));

/**
 * A workbench's host requests: the per-cell limits, the handler call, and the one reply each gets
 * (never sent once its execution has ended), every reply told to `onHostReply`.
 */
export class HostRequests {
  readonly #scope: RequestScope;
  readonly #opts: Pick<StartWorkerOptions, "onStrayHostRequest" | "onHostReply">;

  constructor(scope: RequestScope, opts: Pick<StartWorkerOptions, "onStrayHostRequest" | "onHostReply">) {
    this.#scope = scope;
    this.#opts = opts;
  }

  handle(message: RequestMessage): void {
    if (this.#scope.role !== "workbench") {
      this.#scope.invalidate("protocol_violation", `a hooks worker sent host_request ${JSON.stringify(message.id)}`);
      return;
    }
    // While a shutdown runs no reply can be sent, so no handler runs either: an effect whose
    // receipt could never reach the cell is not made.
    if (!this.#scope.running()) return;
    const run = this.#scope.cell();
    if (!run || run.op.id !== message.execution_id) {
      this.#stray(message);
      return;
    }
    const cell = run.op;
    const refusal = this.#refusal(run, message);
    if (refusal) {
      this.#reply(cell, message, refusal);
      return;
    }
    let request: HostRequest;
    try {
      request = parseHostRequest(message.request);
    } catch (err) {
      this.#reply(cell, message, { kind: "error", code: "invalid_request", message: messageOf(err) });
      return;
    }
    const handler = run.handler;
    if (!handler) {
      this.#reply(cell, message, { kind: "error", code: "unsupported", message: `no host request handler for ${JSON.stringify(request.method)}` });
      return;
    }
    const ctx: HostRequestContext = { executionId: message.execution_id, requestId: message.id, signal: cell.signal };
    // Called now, while the cell certainly runs: a completion read later in the same chunk cannot
    // end the cell before its handler starts (it aborts ctx.signal afterwards instead).
    void settleWith(() => handler(request, ctx)).then(
      (value) => {
        if (request.method === "runtime.wait") run.waitAccepted = true;
        this.#reply(cell, message, { kind: "ok", value }, true);
      },
      (err) => this.#reply(cell, message, { kind: "error", code: replyCode(err), message: messageOf(err) }, true),
    );
  }

  /** A request for an execution that is not running: the stray handler's answer, or `scope_expired`. */
  #stray(message: RequestMessage): void {
    const stray = this.#opts.onStrayHostRequest;
    if (!stray) {
      this.#reply(undefined, message, {
        kind: "error",
        code: "scope_expired",
        message: `execution ${JSON.stringify(message.execution_id)} is not running`,
      });
      return;
    }
    const ids = { executionId: message.execution_id, requestId: message.id };
    void settleWith(() => stray(message.request, ids)).then(
      (value) => this.#reply(undefined, message, { kind: "ok", value }, true),
      (err) => this.#reply(undefined, message, { kind: "error", code: replyCode(err), message: messageOf(err) }, true),
    );
  }

  /** Count the request against its cell; the refusal when it is over the limit or the cell has yielded. */
  #refusal(run: CellRun, message: RequestMessage): HostReplyBody | undefined {
    const id = run.op.id;
    run.requests += 1;
    if (run.requests > MAX_REQUESTS_PER_CELL) {
      return {
        kind: "error",
        code: "limit_exceeded",
        message: `request ${run.requests} of execution ${JSON.stringify(id)} exceeds the limit of ${MAX_REQUESTS_PER_CELL}`,
      };
    }
    if (run.waitAccepted) {
      return { kind: "error", code: "scope_expired", message: `execution ${JSON.stringify(id)} has yielded; request ${JSON.stringify(message.id)} is refused` };
    }
    return undefined;
  }

  /**
   * Send a host_reply unless its execution has ended; an unencodable value becomes an `internal`
   * error. `onHostReply` is told the body that went out (or that nothing did), so the host logs
   * exactly what the worker got, refusals made here included. `handled`: a handler produced it.
   */
  #reply(cell: Operation<CellCompletion> | undefined, request: { id: string; execution_id: string; request?: unknown }, reply: HostReplyBody, handled = false): void {
    const sent = this.#send(cell, request, reply);
    const report = this.#opts.onHostReply;
    if (!report) return;
    try {
      report({ executionId: request.execution_id, requestId: request.id, request: request.request, reply: sent ?? reply, handled, sent: sent !== null });
    } catch {
      /* the host's log failing must not break the exchange */
    }
  }

  #send(cell: Operation<CellCompletion> | undefined, request: { id: string; execution_id: string }, reply: HostReplyBody): HostReplyBody | null {
    if (cell?.ended) return null;
    const channel = this.#scope.channel();
    if (!channel || channel.closed || !this.#scope.running()) return null;
    const base = { kind: "host_reply" as const, id: request.id, execution_id: request.execution_id };
    try {
      channel.send({ ...base, reply });
      return reply;
    } catch (err) {
      const fallback: HostReplyBody = { kind: "error", code: "internal", message: `the reply could not be encoded: ${messageOf(err)}` };
      channel.send({ ...base, reply: fallback });
      return fallback;
    }
  }
}
