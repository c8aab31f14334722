import type { ResourceLimits } from "@klbr/supervisor";
import { collectRuntime, findTarget, installScript, isRemoteError, openRemoteWorker, readTargets, type InstalledRuntime, type RemoteWorker } from "@klbr/remote";
import type { CellCompletion, DisplayListener, OutputListener } from "@klbr/supervisor";
import type { Store } from "../store/api";
import type { DisplayRecorder } from "./displays";
import type { LiveExecution } from "./live-execution";
import type { LiveOutputHub } from "./live-output";
import { invalidRequest, ReplyError } from "../requests/errors";
import type { RemoteNamespaceRow } from "../store/remote";

/** `remote.ensure` reply (C14). */
export interface EnsureReply {
  target: string;
  namespace_id: string;
  namespace_generation: string;
  remote_pid: number;
}

/** The completion record `remote.call` replies with: the cell's `completed` result, as the worker sends it. */
export type CompletionRecord =
  | { kind: "cell"; status: string; output: Array<{ stream: string; text: string }>; truncated_bytes: number; error: string | null }
  | { kind: "failed"; error: string };

/** remote.call parameters (the envelope schema checked their types). */
export interface CallParams {
  target: string;
  namespace_id: string;
  namespace_generation: string;
  operation_id: string;
  operation: string;
  payload: unknown;
}

/** What `remote.cancel` tells the cell: whether the ladder ran, and the rung that ended the operation. */
export interface CancelReply {
  namespace_id: string;
  namespace_generation: string;
  operation_id: string;
  status: "cancelled" | "not_running";
  rung: "queued" | "message" | "sigint" | "hard_stop" | null;
}

/** The remote.* requests, as handlers use them. */
export interface RemoteService {
  ensure(live: LiveExecution, target: string): Promise<EnsureReply>;
  call(live: LiveExecution, params: CallParams, signal?: AbortSignal): Promise<CompletionRecord>;
  cancel(live: LiveExecution, params: { namespace_id: string; namespace_generation: string; operation_id: string }): Promise<CancelReply>;
  close(live: LiveExecution, params: { namespace_id: string; namespace_generation: string }): Promise<{ namespace_id: string; namespace_generation: string; status: "closed" }>;
}

/** What the service needs of the host. */
export interface RemoteDeps {
  /** The log: namespaces, generations and operations (RemoteStore). */
  store: Pick<Store, "recordGeneration" | "closeWithGeneration" | "getNamespace" | "openNamespace" | "openNamespaces" | "latestGeneration" | "endGeneration" | "getOperation" | "insertOperation" | "finishOperation">;
  dataDir: string;
  pythonDir: string;
  now(): number;
  newId(prefix: string): string;
  interruptGraceMs?: number;
  sigintGraceMs?: number;
  /** The host's limits (C17): the remote keeper applies them to the worker as rlimits. */
  limits?: ResourceLimits;
  /** C16: remote cells stream like local ones, under the execution that called them; null when off. */
  liveOutput?: Pick<LiveOutputHub, "forExecution"> | null;
  /** C20: remote cells' displays are the calling execution's (stored and listed under it); absent: remote workers send none. */
  displays?: Pick<DisplayRecorder, "forExecution" | "output" | "addDropped">;
}

/** The longest cell source the wire accepts (spec "Transport and bounds"). */
const MAX_CODE_BYTES = 262_144;

/** One operation of a live generation. */
interface LiveOperation {
  code: string;
  /** The calling cell: its clients see the remote cell's output as its own (C16), numbered in its stream. */
  caller: LiveExecution;
  /** Set when its cell was sent to the worker. */
  started: boolean;
  /** Set by a cancel that came before the cell was sent: it then never runs. */
  cancelled: boolean;
  promise: Promise<CompletionRecord>;
}

/** One live remote generation. */
interface LiveGeneration {
  namespaceId: string;
  generation: string;
  target: string;
  remote: RemoteWorker;
  /** Operations run one at a time, in the order they were called. */
  tail: Promise<unknown>;
  ops: Map<string, LiveOperation>;
}

/** The record a remote.call replies with, from what the supervisor reported. */
export function completionRecord(completion: CellCompletion): CompletionRecord {
  if (completion.kind === "failed") return { kind: "failed", error: completion.error };
  if (completion.source === "worker") {
    return { kind: "cell", status: completion.status, output: completion.output, truncated_bytes: completion.truncated_bytes, error: completion.error };
  }
  const why = completion.endedBy === "shutdown" ? "the namespace was closed" : "the remote worker was hard-stopped";
  return { kind: "cell", status: "interrupted", output: [], truncated_bytes: 0, error: `${why} while the cell ran (${completion.reason})` };
}

/** A RemoteError as a host reply: an unknown target is not_found, anything about reaching it unavailable. */
function replyFor(error: unknown): ReplyError {
  if (error instanceof ReplyError) return error;
  if (isRemoteError(error)) return new ReplyError(error.code === "REMOTE_TARGET_NOT_FOUND" ? "not_found" : "unavailable", `${error.code}: ${error.message}`);
  return new ReplyError("unavailable", (error as Error).message);
}

const scopeExpired = (what: string) => new ReplyError("scope_expired", `${what} is not live`);

/**
 * Remote namespaces (C14): per session and target, one namespace at a time; its generations are
 * remote workers started over ssh and supervised like local ones. Durable rows say what exists;
 * the live map holds the workers of this host process.
 */
export class RemoteNamespaces implements RemoteService {
  readonly #deps: RemoteDeps;
  readonly #live = new Map<string, LiveGeneration>();
  /** ensure() calls under way, by session and target: a second caller shares the first one's start. */
  readonly #starting = new Map<string, Promise<EnsureReply>>();
  /** remote.call admissions under way, by namespace and operation id: the same operation's second call reads what the first wrote. */
  readonly #admitting = new Map<string, Promise<unknown>>();
  #stopping = false;

  constructor(deps: RemoteDeps) {
    this.#deps = deps;
  }

  // ---- remote.ensure ----

  ensure(live: LiveExecution, target: string): Promise<EnsureReply> {
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(target)) return Promise.reject(invalidRequest(`target ${JSON.stringify(target)} is not an identifier`));
    const key = `${live.sessionId}\0${target}`;
    let starting = this.#starting.get(key);
    if (!starting) {
      starting = this.#ensure(live, target).finally(() => this.#starting.delete(key));
      this.#starting.set(key, starting);
    }
    return starting;
  }

  async #ensure(live: LiveExecution, targetName: string): Promise<EnsureReply> {
    const { store } = this.#deps;
    const existing = await store.openNamespace(live.sessionId, targetName);
    const running = existing ? this.#live.get(existing.id) : undefined;
    if (existing && running && running.remote.worker.state !== "dead") return this.#reply(running);
    if (this.#stopping) throw new ReplyError("unavailable", "the host is stopping");
    let remote: RemoteWorker;
    let runtime: InstalledRuntime;
    const namespaceId = existing?.id ?? this.#deps.newId("rns");
    const previous = existing ? await store.latestGeneration(existing.id) : undefined;
    const generation = `g-${(previous ? Number(previous.generation.replace(/^g-/, "")) || 0 : 0) + 1}`;
    let target;
    try {
      target = findTarget(readTargets(this.#deps.dataDir), targetName);
      // Warm (the runtime's digest is there): one ssh connection; cold: the copy first, then the start.
      ({ remote, runtime } = await openRemoteWorker({
        target,
        bundle: collectRuntime(this.#deps.pythonDir),
        script: installScript(this.#deps.pythonDir),
        sessionId: namespaceId,
        generation,
        ...(this.#deps.interruptGraceMs !== undefined ? { interruptGraceMs: this.#deps.interruptGraceMs } : {}),
        ...(this.#deps.sigintGraceMs !== undefined ? { sigintGraceMs: this.#deps.sigintGraceMs } : {}),
        ...(this.#deps.limits ? { limits: this.#deps.limits } : {}),
        ...(this.#deps.liveOutput ? { liveOutput: true } : {}),
        ...(this.#deps.displays ? { display: true } : {}),
      }));
    } catch (error) {
      throw replyFor(error);
    }
    if (this.#stopping) {
      await remote.worker.shutdown();
      throw new ReplyError("unavailable", "the host stopped while the remote worker started; it was shut down");
    }
    const now = this.#deps.now();
    // The namespace row is written once a worker said hello: a target that cannot be reached leaves no namespace.
    await store.recordGeneration(existing ? null : { id: namespaceId, sessionId: live.sessionId, target: targetName, openedByExecutionId: live.id, openedAtMs: now }, {
      namespaceId,
      generation,
      target: targetName,
      remotePid: remote.remotePid,
      localPid: remote.worker.pid,
      runtimeDigest: runtime.digest,
      runtimeCopied: runtime.copied,
      python: runtime.python,
      startedAtMs: now,
    }).catch(async (error: unknown) => {
      // Not recorded: a worker no row names must not run on.
      await remote.worker.shutdown();
      throw error;
    });
    const gen: LiveGeneration = { namespaceId, generation, target: targetName, remote, tail: Promise.resolve(), ops: new Map() };
    this.#live.set(namespaceId, gen);
    remote.worker.onDeath((exit) => {
      if (this.#live.get(namespaceId) === gen) this.#live.delete(namespaceId);
      // The log may be closed (the host stopped): its recovery closes the row at the next start.
      store.endGeneration(namespaceId, generation, exit.reason, this.#deps.now()).catch(() => undefined);
    });
    return this.#reply(gen);
  }

  #reply(gen: LiveGeneration): EnsureReply {
    return { target: gen.target, namespace_id: gen.namespaceId, namespace_generation: gen.generation, remote_pid: gen.remote.remotePid };
  }

  // ---- scope ----

  /** The session's namespace `id`, or scope_expired (another session's namespace is not live for this one). */
  async #namespace(live: LiveExecution, id: string): Promise<RemoteNamespaceRow> {
    const ns = await this.#deps.store.getNamespace(id);
    if (!ns || ns.sessionId !== live.sessionId) throw scopeExpired(`namespace ${JSON.stringify(id)}`);
    return ns;
  }

  /** The live generation `generation` of an open namespace, or scope_expired. */
  #generation(ns: RemoteNamespaceRow, generation: string): LiveGeneration {
    const gen = this.#live.get(ns.id);
    if (ns.status !== "open" || !gen || gen.generation !== generation || gen.remote.worker.state === "dead") {
      throw scopeExpired(`generation ${JSON.stringify(generation)} of namespace ${JSON.stringify(ns.id)}`);
    }
    return gen;
  }

  // ---- remote.call ----

  async call(live: LiveExecution, params: CallParams, signal?: AbortSignal): Promise<CompletionRecord> {
    if (params.operation !== "execute") throw invalidRequest(`operation must be "execute", got ${JSON.stringify(params.operation)}`);
    const payload = params.payload as Record<string, unknown> | null;
    if (typeof payload !== "object" || payload === null || Array.isArray(payload) || Object.keys(payload).join() !== "code" || typeof payload.code !== "string") {
      throw invalidRequest(`payload must be {"code": string}, got ${JSON.stringify(params.payload)?.slice(0, 200)}`);
    }
    const code = payload.code;
    if (Buffer.byteLength(code) > MAX_CODE_BYTES) throw invalidRequest(`payload.code is ${Buffer.byteLength(code)} bytes, more than ${MAX_CODE_BYTES}`);
    // One admission at a time per operation identity: a repeat reads the row the first one wrote (it was one tick before the store was async).
    const key = `${params.namespace_id}\0${params.operation_id}`;
    const prior = this.#admitting.get(key);
    const admitted = (prior ?? Promise.resolve()).catch(() => undefined).then(() => this.#admit(live, params, code, signal));
    const admission = admitted.then(
      () => undefined,
      () => undefined,
    );
    this.#admitting.set(key, admission);
    void admission.then(() => {
      if (this.#admitting.get(key) === admission) this.#admitting.delete(key);
    });
    const started = await admitted;
    return started();
  }

  /** remote.call's checks and its operation row; resolves to what then waits for the operation's record. */
  async #admit(live: LiveExecution, params: CallParams, code: string, signal?: AbortSignal): Promise<() => Promise<CompletionRecord>> {
    const ns = await this.#namespace(live, params.namespace_id);
    if (ns.target !== params.target) throw invalidRequest(`namespace ${JSON.stringify(ns.id)} is on target ${JSON.stringify(ns.target)}, not ${JSON.stringify(params.target)}`);
    // Idempotent by operation id: the same call again gets the same record, whatever happened since.
    const done = await this.#deps.store.getOperation(ns.id, params.operation_id);
    if (done) {
      if (done.generation !== params.namespace_generation || done.code !== code) {
        throw new ReplyError("conflict", `operation ${JSON.stringify(params.operation_id)} of namespace ${JSON.stringify(ns.id)} was already called with another generation or code`);
      }
      if (done.status !== "running") return async () => done.completion as CompletionRecord;
      const inflight = this.#live.get(ns.id)?.ops.get(params.operation_id);
      if (inflight) return () => inflight.promise;
      throw new ReplyError("conflict", `operation ${JSON.stringify(params.operation_id)} is recorded as running, but no worker of this host runs it`);
    }
    const gen = this.#generation(ns, params.namespace_generation);
    await this.#deps.store.insertOperation({
      namespaceId: ns.id,
      generation: gen.generation,
      operationId: params.operation_id,
      operation: "execute",
      code,
      executionId: live.id,
      startedAtMs: this.#deps.now(),
    });
    // A generation that died while the row was written fails the operation in #run, recorded as any refusal.
    const op: LiveOperation = { code, caller: live, started: false, cancelled: false, promise: undefined as never };
    op.promise = gen.tail.then(() => this.#run(gen, params.operation_id, op));
    gen.tail = op.promise.catch(() => undefined);
    gen.ops.set(params.operation_id, op);
    return async () => {
      // The calling cell ended (interrupted, or its task outlived it): what it started remotely stops too.
      const onAbort = () => void this.#cancelOp(gen, params.operation_id, op);
      if (signal?.aborted) onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        return await op.promise;
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
    };
  }

  /** A remote cell's live output and displays, under the local cell that called it (one seq for both). */
  #outputOf(op: LiveOperation): { onOutput?: OutputListener; onDisplay?: DisplayListener } {
    const listener = this.#deps.liveOutput?.forExecution(op.caller);
    // In order with the caller's displays (a display still being stored holds the output after it).
    const onOutput = listener && this.#deps.displays ? this.#deps.displays.output(op.caller, listener) : listener;
    const onDisplay = this.#deps.displays?.forExecution(op.caller);
    return { ...(onOutput ? { onOutput } : {}), ...(onDisplay ? { onDisplay } : {}) };
  }

  async #run(gen: LiveGeneration, operationId: string, op: LiveOperation): Promise<CompletionRecord> {
    let record: CompletionRecord;
    let endedBy: string | null;
    if (op.cancelled) {
      record = { kind: "cell", status: "interrupted", output: [], truncated_bytes: 0, error: "cancelled before it started" };
      endedBy = "cancelled";
    } else {
      op.started = true;
      try {
        const completion = await gen.remote.worker.execute(op.code, {
          id: operationId,
          onHostRequest: (request) => {
            throw new ReplyError("unsupported", `${request.method}: a remote namespace's cells make no host requests`);
          },
          ...this.#outputOf(op),
        });
        record = completionRecord(completion);
        endedBy = completion.endedBy;
        // What the remote cell could not show counts as the caller's (C20: its completion says how many).
        this.#deps.displays?.addDropped(op.caller, (completion as { displays_dropped?: number }).displays_dropped ?? 0);
      } catch (error) {
        record = { kind: "failed", error: `the remote worker could not run the cell: ${(error as Error).message}` };
        endedBy = "refused";
      }
    }
    try {
      await this.#deps.store.finishOperation(gen.namespaceId, operationId, {
        status: record.kind === "cell" ? (record.status as "ok" | "error" | "interrupted") : "failed",
        completion: record,
        endedBy,
        atMs: this.#deps.now(),
      });
    } finally {
      gen.ops.delete(operationId);
    }
    return record;
  }

  // ---- remote.cancel ----

  async cancel(live: LiveExecution, params: { namespace_id: string; namespace_generation: string; operation_id: string }): Promise<CancelReply> {
    const gen = this.#generation(await this.#namespace(live, params.namespace_id), params.namespace_generation);
    const base = { namespace_id: gen.namespaceId, namespace_generation: gen.generation, operation_id: params.operation_id };
    const op = gen.ops.get(params.operation_id);
    if (!op) return { ...base, status: "not_running", rung: null };
    const rung = await this.#cancelOp(gen, params.operation_id, op);
    return rung === null ? { ...base, status: "not_running", rung: null } : { ...base, status: "cancelled", rung };
  }

  /** The interrupt ladder for a started operation, a mark for a queued one; resolves once its row is closed. */
  async #cancelOp(gen: LiveGeneration, operationId: string, op: LiveOperation): Promise<CancelReply["rung"]> {
    if (!op.started) {
      op.cancelled = true;
      await op.promise.catch(() => undefined);
      return op.started ? "message" : "queued";
    }
    const outcome = await gen.remote.worker.interrupt(operationId);
    await op.promise.catch(() => undefined);
    // Finished on its own while the ladder climbed: nothing was cancelled.
    return outcome.rung === "not_running" || outcome.rung === "completed" ? null : outcome.rung;
  }

  // ---- remote.close ----

  async close(live: LiveExecution, params: { namespace_id: string; namespace_generation: string }) {
    const ns = await this.#namespace(live, params.namespace_id);
    const latest = await this.#deps.store.latestGeneration(ns.id);
    if (ns.status !== "open" || !latest || latest.generation !== params.namespace_generation) {
      throw scopeExpired(`generation ${JSON.stringify(params.namespace_generation)} of namespace ${JSON.stringify(ns.id)}`);
    }
    const gen = this.#live.get(ns.id);
    // A graceful shutdown: the worker exits, its keeper kills what is left of the remote tree and
    // exits, which ends the ssh session; the supervisor hard-stops the lot after its grace.
    if (gen) await gen.remote.worker.shutdown();
    const now = this.#deps.now();
    await this.#deps.store.closeWithGeneration(ns.id, params.namespace_generation, live.id, now);
    return { namespace_id: ns.id, namespace_generation: params.namespace_generation, status: "closed" as const };
  }

  // ---- the host's side ----

  /** Open namespaces with their live generation, for `klbr status`. */
  async status(): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const ns of await this.#deps.store.openNamespaces()) {
      const latest = await this.#deps.store.latestGeneration(ns.id);
      // Read after the awaits: the live state as it is now.
      const gen = this.#live.get(ns.id);
      out.push({
        namespace_id: ns.id,
        session_id: ns.sessionId,
        target: ns.target,
        generation: latest?.generation ?? null,
        state: gen ? gen.remote.worker.state : "dead",
        remote_pid: gen?.remote.remotePid ?? null,
        ssh_pid: gen?.remote.worker.pid ?? null,
        running: gen ? [...gen.ops.entries()].filter(([, op]) => op.started).map(([id]) => id) : [],
        ended: latest?.endReason ?? null,
      });
    }
    return out;
  }

  /** Shut every remote worker down (each takes its remote tree with it); namespaces stay open for the next host. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.allSettled([...this.#starting.values()]);
    const gens = [...this.#live.values()];
    await Promise.allSettled(
      gens.map(async (gen) => {
        await this.#deps.store.endGeneration(gen.namespaceId, gen.generation, "host_stop", this.#deps.now()).catch(() => undefined);
        await gen.remote.worker.shutdown();
      }),
    );
  }
}
