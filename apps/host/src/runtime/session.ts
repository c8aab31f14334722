import { performance } from "node:perf_hooks";
import {
  bodyDigest,
  callRoute,
  cellsOf,
  isDriverError,
  needsBudgetFold,
  renderCellResult,
  planBudgetFoldAsync,
  RequestAssembler,
  routeKey,
  type FrontierRef,
  type ModelReply,
  type Route,
} from "@klbr/driver";
import { fold, JOINED_SOURCE, resolve } from "@klbr/header";
import type { Store } from "../store/api";
import type { Notification } from "../requests/context";
import type { FrontierFields } from "../store/turn-statements";
import { reassembleRequest } from "./reassemble";
import { TurnStop } from "./turn-stop";

/** What one session's turn loop uses of the host. */
export interface TurnHost {
  /** The log, through the async Store (C21): every read and write of a turn goes through it. */
  readonly store: Store;
  now(): number;
  newId(prefix: string): string;
  notify(notification: Notification): void;
  /** Run one cell in the session's workbench under a known execution id. */
  execute(code: string, sessionId: string, opts: { executionId: string }): Promise<{ status: string }>;
  /** Interrupt one cell by id through the C7 ladder (or keep a queued one from running). */
  interrupt(executionId: string): Promise<unknown>;
  /** The session's workbench is up and its header pinned. */
  prepareSession(sessionId: string): Promise<void>;
  /** Observe instruction changes made outside the session (another session adopted orientation in its scope) before a request. */
  observeInstructions(sessionId: string): Promise<void>;
  /** Whether the session was stopped for good (peer.stop): it runs no more turns. */
  closed(sessionId: string): boolean;
  /** The frontier block for a fold covering through `coversThrough` (C12). */
  frontierBlock(sessionId: string, coversThrough: number): Promise<string>;
  /** Whether the host is stopping (a turn then ends without recording a failure). */
  readonly stopping: boolean;
  /** Aborted when the host stops: a route call in flight is abandoned. */
  readonly signal: AbortSignal;
  /** Many hosts (C21): claim the session's lease before a turn; false when another host holds it. */
  claim?(sessionId: string): Promise<boolean>;
  /** Many hosts: the view one session's turns use (stopping and aborted also when this host loses the session). */
  forSession?(sessionId: string): TurnHost;
}

/** The default C10 limit on cells in one turn. */
export const MAX_CELLS_PER_TURN = 50;

interface PendingReply {
  requestId: string;
  reply: ModelReply;
  /** Calls already answered (null: the fence cell). */
  answered: Set<string | null>;
  /** Calls whose cell record exists but whose execution never started (a crash in between). */
  preassigned: Map<string | null, string>;
  yielded: boolean;
}

/**
 * One session's turn loop (C10). A turn starts when the session is woken and has no open wait;
 * it sends a request assembled from the log, runs the cells of the reply one at a time, and
 * repeats, until a cell yields (the wait it accepted ends the turn), a reply has no cell (a
 * `model_ended_turn` wait), or `max_cells_per_turn` cells ran (an incident, then a wait). One
 * turn at a time: a wake during a turn is remembered and looked at when it ends.
 *
 * Everything is read back from the log, so a host that restarts mid-turn resumes where the log
 * stops: a reply already recorded is not requested again, a call whose cell record exists is not
 * run again (its execution was closed `interrupted` by recovery, and the model reads that).
 */
export class SessionTurns {
  private running: Promise<void> | null = null;
  private again = false;
  private assembler: RequestAssembler | null = null;
  private assemblerKey = "";
  private previousBody: string | null | undefined = undefined;
  private adoptionMark = -1;
  private readonly stop: TurnStop;

  constructor(
    private readonly host: TurnHost,
    readonly sessionId: string,
    private readonly route: () => Route | null,
    private readonly maxCells = MAX_CELLS_PER_TURN,
  ) {
    this.stop = new TurnStop((id) => host.interrupt(id));
  }

  private append(row: { kind: "cell" | "refusal" | "turn_end"; ref: string; requestId?: string | null; callId?: string | null; detail?: unknown; atMs: number }): Promise<number> {
    return this.host.store.appendTranscript({ sessionId: this.sessionId, ...row });
  }

  /** Whether a turn is running now. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** The turn under way, if any (for a clean stop). */
  get current(): Promise<void> | null {
    return this.running;
  }

  /** Stop the running turn (Ctrl-C): calls not run are refused, the turn ends with an `operator_interrupted` wait. False when none runs. */
  stopTurn(): boolean {
    if (this.running) this.stop.ask();
    return this.running !== null;
  }

  /** Look at the session: start a turn when it is due, or note the wake for the end of the running one. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      if (this.host.stopping) return;
      try {
        await this.turn();
      } catch (error) {
        if (this.host.stopping) return;
        await this.host.store.recordIncident("model.turn_failed", { session_id: this.sessionId, error: String((error as Error).stack ?? error) }, this.host.now());
        await this.endTurn("turn_failed", null);
      } finally {
        this.stop.clear();
      }
    } while (this.again && !this.host.stopping);
  }

  private async turn(): Promise<void> {
    if (this.host.closed(this.sessionId) || (await this.host.store.hasOpenWait(this.sessionId))) return;
    const route = this.route();
    if (!route) return;
    await this.host.prepareSession(this.sessionId);
    let key: string | null;
    try {
      key = routeKey(route);
    } catch (error) {
      await this.host.store.recordIncident("model.route_failed", { session_id: this.sessionId, route: route.name, code: (error as { code?: string }).code, message: (error as Error).message }, this.host.now());
      await this.endTurn("route_failed", null);
      return;
    }
    const turnId = this.host.newId("turn");
    this.host.notify({ type: "model", phase: "turn_start", session_id: this.sessionId, turn_id: turnId, at_ms: this.host.now() });
    let cells = 0;
    // Only a turn's first step can find calls unanswered (a restart mid-turn): later steps answered or refused them all.
    for (let step = 0; ; step++) {
      // A closed session (peer.stop) sends nothing more: checked before every request (C13).
      if (this.host.stopping || this.host.closed(this.sessionId)) return;
      let pending = step === 0 ? await this.unansweredReply(route) : null;
      if (!pending) {
        if (this.stop.requested) {
          if (await this.endTurn("operator_interrupted", null, true)) this.again = true;
          return;
        }
        const sent = await this.request(route, key, turnId);
        if (!sent) return;
        pending = { requestId: sent.requestId, reply: sent.reply, answered: new Set(), preassigned: new Map(), yielded: false };
      }
      const calls = cellsOf(pending.reply, route.cells);
      if (calls.length === 0) {
        if (await this.endTurn("model_ended_turn", pending.requestId)) continue;
        return;
      }
      let yielded = pending.yielded;
      for (const call of calls) {
        if (pending.answered.has(call.call_id)) continue;
        if (this.host.stopping) return;
        const closed = this.host.closed(this.sessionId);
        if (closed || yielded) {
          await this.refuse(pending.requestId, call.call_id, closed ? "the session was stopped (peer.stop) before this call" : "the turn ended at a yielded cell before this call");
          continue;
        }
        if (this.stop.requested) {
          await this.refuse(pending.requestId, call.call_id, "the operator stopped the turn before this call");
          continue;
        }
        if (cells >= this.maxCells) {
          await this.refuse(pending.requestId, call.call_id, `this turn reached max_cells_per_turn (${this.maxCells})`);
          continue;
        }
        if ("refused" in call) {
          await this.refuse(pending.requestId, call.call_id, call.refused);
          continue;
        }
        cells += 1;
        let executionId = pending.preassigned.get(call.call_id);
        if (!executionId) {
          executionId = this.host.newId("ex");
          // The record comes first: a restart finds the call taken and never runs it a second time.
          await this.append({ kind: "cell", ref: executionId, requestId: pending.requestId, callId: call.call_id, atMs: this.host.now() });
        }
        this.host.notify({ type: "model", phase: "cell", session_id: this.sessionId, execution_id: executionId, code: call.code, at_ms: this.host.now() });
        const cellStarted = performance.now();
        const report = await this.stop.runCell(executionId, () => this.host.execute(call.code, this.sessionId, { executionId }));
        const cellMs = performance.now() - cellStarted;
        if (report.status === "yielded") yielded = true;
        const result = await this.host.store.cellResult(executionId);
        this.host.notify({ type: "model", phase: "result", session_id: this.sessionId, execution_id: executionId, status: report.status, text: result ? renderCellResult(result) : "", cell_ms: cellMs, at_ms: this.host.now() });
      }
      if (yielded) {
        this.host.notify({ type: "model", phase: "turn_end", session_id: this.sessionId, turn_id: turnId, reason: "yielded", at_ms: this.host.now() });
        return;
      }
      if (this.stop.requested) {
        if (await this.endTurn("operator_interrupted", pending.requestId, true)) this.again = true;
        return;
      }
      if (cells >= this.maxCells) {
        await this.host.store.recordIncident("model.max_cells_per_turn", { session_id: this.sessionId, turn_id: turnId, cells }, this.host.now());
        if (await this.endTurn("max_cells_per_turn", pending.requestId)) this.again = true;
        return;
      }
    }
  }

  /**
   * End the turn with a durable wait (no deadline). Returns true when input was already pending
   * (the wait is born woken and the model should be asked again). A turn ended for the model
   * (`told`: the operator stopped it) is also a transcript record its next request reads.
   */
  private async endTurn(reason: string, requestId: string | null, told = false): Promise<boolean> {
    const now = this.host.now();
    const { row } = await this.host.store.createWait({ id: this.host.newId("wait"), sessionId: this.sessionId, executionId: requestId ?? "none", reason, seconds: null, nowMs: now });
    if (told) await this.append({ kind: "turn_end", ref: row.id, requestId, detail: { reason }, atMs: now });
    this.host.notify({ type: "model", phase: "turn_end", session_id: this.sessionId, reason, wait_id: row.id, at_ms: now });
    return row.state === "woken";
  }

  private async refuse(requestId: string, callId: string | null, reason: string): Promise<void> {
    await this.append({ kind: "refusal", ref: requestId, requestId, callId, detail: { reason }, atMs: this.host.now() });
    this.host.notify({ type: "model", phase: "refusal", session_id: this.sessionId, request_id: requestId, call_id: callId, reason, at_ms: this.host.now() });
  }

  /** The newest reply of the transcript when some of its calls have no answer yet (a resumed turn). */
  private async unansweredReply(route: Route): Promise<PendingReply | null> {
    const last = await this.host.store.lastReply(this.sessionId);
    if (!last) return null;
    const { requestId } = last;
    const reply = last.reply as ModelReply;
    const answered = new Set<string | null>();
    const preassigned = new Map<string | null, string>();
    let yielded = false;
    for (const row of last.answers) {
      if (row.kind === "cell") {
        if (row.executionStatus === null) {
          preassigned.set(row.callId, row.ref);
          continue;
        }
        if (row.executionStatus === "yielded") yielded = true;
      }
      answered.add(row.callId);
    }
    const calls = cellsOf(reply, route.cells);
    if (calls.length === 0 || calls.every((c) => answered.has(c.call_id))) return null;
    return { requestId, reply, answered, preassigned, yielded };
  }

  /** Install a frontier: pin the header anew (rule 3) and mark it installed. */
  private async install(frontier: FrontierFields): Promise<void> {
    const { store } = this.host;
    const chain = (await store.headerChain(this.sessionId)) as Parameters<typeof resolve>[0];
    const covered: string[] = [];
    for (const row of await store.transcriptRows(this.sessionId, 0, frontier.coversThrough)) {
      if (row.kind === "observation") covered.push((await store.headerRecord(Number(row.ref)))!.digest);
    }
    const current = resolve(chain);
    const sources = current.sources ?? [{ name: JOINED_SOURCE, text: current.text ?? "" }];
    const pin = fold(chain, sources, this.host.now(), covered);
    // One store transaction: the pin and its frontier marked installed under it.
    await store.installPin({ sessionId: this.sessionId, frontierId: frontier.id, digest: pin.digest, record: pin, pinnedAtMs: pin.pinned_at_ms, installedAtMs: this.host.now() });
    this.host.notify({ type: "model", phase: "fold", session_id: this.sessionId, frontier_id: frontier.id, reason: frontier.reason, pin_reason: pin.reason, covers_through: frontier.coversThrough, at_ms: this.host.now() });
  }

  /** The assembler for the session's current pin and frontier, brought up to the end of the transcript. */
  private async assemble(route: Route): Promise<{ assembler: RequestAssembler; pinId: number; frontier: FrontierFields | undefined }> {
    const { store } = this.host;
    const pinId = await store.pinIdOf(this.sessionId);
    if (pinId === undefined) throw new Error(`session ${this.sessionId} has no header pin`);
    const frontier = await store.installedFrontierOf(this.sessionId);
    const key = `${JSON.stringify(route)}|${pinId}|${frontier?.id ?? ""}`;
    if (!this.assembler || this.assemblerKey !== key) {
      const ref: FrontierRef | null = frontier ? { frontier_id: frontier.id, covers_through: frontier.coversThrough, block: frontier.block, created_at_ms: frontier.createdAtMs } : null;
      // The pin's record is read (and parsed) only here, when the assembler starts over.
      const pin = (await store.pinOf(this.sessionId))!;
      this.assembler = new RequestAssembler(route, pin.text, ref);
      this.assemblerKey = key;
    }
    this.assembler.append(await store.loadTranscript(this.sessionId, this.assembler.through, undefined, { images: route.images === true }));
    return { assembler: this.assembler, pinId, frontier };
  }

  /** Send one request; records the row before and the reply after. Null when the route failed (the turn ended). */
  private async request(route: Route, key: string | null, turnId: string): Promise<{ requestId: string; reply: ModelReply } | null> {
    const { store } = this.host;
    // Another session's adoption is the only change between generations a header can see (C11):
    // observed before the next request after one was recorded.
    const mark = await store.adoptionMark();
    if (mark !== this.adoptionMark) {
      await this.host.observeInstructions(this.sessionId);
      this.adoptionMark = mark;
    }
    const selected = await store.pendingFrontierOf(this.sessionId);
    if (selected) await this.install(selected);
    await store.transcribeNew(this.sessionId, (await store.pinIdOf(this.sessionId)) ?? 0, () => this.host.now());
    let { assembler, pinId, frontier } = await this.assemble(route);
    let body = assembler.body();
    if (needsBudgetFold(body.bytes, route.context_tokens)) {
      const records = await store.loadTranscript(this.sessionId, frontier?.coversThrough ?? 0, undefined, { images: route.images === true });
      // Planned on the body that will be sent (C12): the route's fields and tool, the header the
      // fold pins (the current text), the block for each cut, the records in the route's wire shape.
      const header = resolve((await store.headerChain(this.sessionId)) as Parameters<typeof resolve>[0]).text ?? (await store.pinOf(this.sessionId))!.text;
      const createdAtMs = this.host.now();
      const through = await planBudgetFoldAsync({ route, header, block: (t) => this.host.frontierBlock(this.sessionId, t), records, createdAtMs });
      if (through !== null) {
        const row = await store.recordFrontier({ id: this.host.newId("fr"), sessionId: this.sessionId, coversThrough: through, block: await this.host.frontierBlock(this.sessionId, through), reason: "budget", executionId: null, createdAtMs });
        await this.install(row);
        ({ assembler, pinId, frontier } = await this.assemble(route));
        body = assembler.body();
      }
    }
    if (this.previousBody === undefined) this.previousBody = await this.lastSentBody();
    const id = this.host.newId("mr");
    const digest = body.digest;
    const started = this.host.now();
    await store.startModelRequest({
      id,
      sessionId: this.sessionId,
      turnId,
      route: route.name,
      api: route.api,
      model: route.model,
      profile: route,
      headerRecordId: pinId,
      frontierId: frontier?.id ?? null,
      throughSeq: assembler.through,
      bodyDigest: digest,
      bodyBytes: body.bytes,
      // Measured without Anthropic's moving cache marker (C10 amended): the marker is not part of the prefix.
      sharedPrefixBytes: assembler.sharedPrefixBytes(this.previousBody, body),
      startedAtMs: started,
    });
    this.previousBody = body.prefixText;
    this.host.notify({ type: "model", phase: "request", session_id: this.sessionId, request_id: id, route: route.name, at_ms: started });
    const routeStarted = performance.now();
    // One controller per call, tied to the host's: the clients add listeners to the signal they get,
    // and the host's lives as long as the host.
    const call = this.stop.callController();
    const abort = () => call.abort();
    this.host.signal.addEventListener("abort", abort, { once: true });
    try {
      const result = await callRoute(route, body.object, {
        key,
        // The assembled text goes out as it is: the client does not serialize the body again.
        text: body.text,
        signal: call.signal,
        onDelta: (delta) => this.host.notify({ type: "model", phase: "delta", session_id: this.sessionId, request_id: id, kind: delta.kind, text: delta.text, at_ms: this.host.now() }),
      });
      const routeMs = performance.now() - routeStarted;
      if (this.host.stopping) return null;
      // The body sent is the body recorded (its digest on the row): compared as text, hashed only when it differs.
      if (result.sent !== null && result.sent !== body.text && bodyDigest(result.sent) !== digest) {
        await store.recordIncident("model.body_mismatch", { session_id: this.sessionId, request_id: id, recorded: digest, sent: bodyDigest(result.sent) }, this.host.now());
      }
      const ended = this.host.now();
      // One transaction: the request closed as answered and its reply record.
      await store.commitModelReply(this.sessionId, id, { reply: result.reply, responseModel: result.model, usage: result.usage, retries: result.retries, endedAtMs: ended });
      this.host.notify({ type: "model", phase: "reply", session_id: this.sessionId, request_id: id, text: result.reply.text, calls: result.reply.calls.length, usage: result.usage, retries: result.retries, route_ms: routeMs, at_ms: ended });
      return { requestId: id, reply: result.reply };
    } catch (error) {
      if (this.host.stopping) return null;
      const e = error as Error & { code?: string; status?: number | null; retries?: number };
      if (this.stop.abandoned(call)) {
        // The operator stopped the turn: the call was abandoned, not failed (no incident).
        await store.failModelRequest(this.sessionId, id, { code: "OPERATOR_INTERRUPTED", message: "the operator stopped the turn during the call", status: null, retries: e.retries ?? 0, endedAtMs: this.host.now() });
        if (await this.endTurn("operator_interrupted", id, true)) this.again = true;
        return null;
      }
      const code = isDriverError(error) ? error.code : "DRIVER_ROUTE_FAILED";
      const ended = this.host.now();
      await store.failModelRequest(this.sessionId, id, { code, message: e.message, status: e.status ?? null, retries: e.retries ?? 0, endedAtMs: ended });
      await store.recordIncident("model.route_failed", { session_id: this.sessionId, request_id: id, route: route.name, code, message: e.message, retries: e.retries ?? 0 }, ended);
      this.host.notify({ type: "model", phase: "error", session_id: this.sessionId, request_id: id, code, message: e.message, at_ms: ended });
      if (await this.endTurn("route_failed", id)) this.again = true;
      return null;
    } finally {
      this.stop.finishCall();
      this.host.signal.removeEventListener("abort", abort);
    }
  }

  /** The prefix text of the session's last request, rebuilt from the log (after a restart, for the shared-prefix figure). */
  private async lastSentBody(): Promise<string | null> {
    const last = (await this.host.store.sessionModelRequests(this.sessionId)).at(-1);
    return last ? (await reassembleRequest(this.host.store, last)).prefixText : null;
  }
}
