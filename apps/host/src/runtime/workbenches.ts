import { startWorker, type HostReplyEvent, type SpareOptions, type StartWorkerOptions, type Worker } from "@klbr/supervisor";
import type { SkillIndex } from "@klbr/skills";
import { HostError } from "../errors";
import { ReplyError } from "../requests/errors";
import type { Store } from "../store/api";
import type { InstructionHeaders } from "./instructions";
import type { HostLife } from "./lifecycle";
import type { Notify } from "./notifier";
import type { SkillsService } from "./skills-service";
import { noteIncident } from "./incident-note";
import { defaultBytecodeDir, RuntimeBytecode } from "./bytecode";
import { RuntimeFingerprint } from "./fingerprint";
import { SparePool } from "./spares";
import { watchLimitDeath } from "./limit-death";
import { StartGate } from "./start-gate";
import { noteRuntimeVersion } from "./version-check";
import { Workbench } from "./workbench";
import type { WorkerLaunch } from "./worker-launch";

/** A spare bound before the skills were indexed again (see Workbenches.bindEarly). */
interface EarlyBind {
  /** The skill set revision the spare was made with. */
  revision: string;
  worker: Promise<Worker>;
  /** Stop it once bound, counted as discarded, not taken: it will not run this generation. */
  abandon(reason: string): void;
}

/** What the workbenches use of the host. */
export interface WorkbenchesDeps {
  /** The log: kernel.reset is awaited there before a generation's first cell can be sent. */
  store: Pick<Store, "recordKernelReset" | "lastKernelReset" | "recordIncident">;
  now(): number;
  notify: Notify["notify"];
  life: Pick<HostLife, "stopping" | "refuseWhenStopping" | "keepUnlessStopping">;
  launch: WorkerLaunch;
  skills: Pick<SkillsService, "reindex" | "materialize" | "sources" | "lastIndex">;
  headers: Pick<InstructionHeaders, "observeGeneration">;
  /** Where the supervisor reports each host reply as sent (the request log). */
  onHostReply(event: HostReplyEvent): void;
  /** Warm spares to keep (C19; default 0 here, `klbr serve` keeps 1). */
  spares?: number;
  /** Workbench starts at once (default: two per core); more queue (see StartGate). */
  startConcurrency?: number;
  /** Where klbr's runtime bytecode is kept (see RuntimeBytecode); null: off. Default {@link defaultBytecodeDir}. */
  bytecodeDir?: string | null;
  /**
   * Whether this host may start a generation of the session now (C21: it did not lose the
   * session's lease). Asked before every start and again once its worker is up; default always.
   */
  mayStart?(sessionId: string): boolean;
}

/**
 * One workbench per session: its first generation started on demand, a new generation on restart
 * (the reason recorded in kernel.reset), a hard stop, and sessions closed for good. Every start
 * goes through {@link Workbenches.startGeneration}, which builds its worker options in
 * {@link Workbenches.workerOptions}: a warm spare, idle culling or resource limits plug in there.
 */
export class Workbenches {
  private readonly benches = new Map<string, Workbench>();
  /** Sessions closed for good (stopped peers): no cell starts there again. */
  private readonly closedSessions = new Set<string>();

  /** Warm spares (C19): a generation starts on one when one is ready and current. */
  readonly spares: SparePool;
  /** The runtime on disk, walked once and then again only after a change (a take walks nothing). */
  readonly runtime: RuntimeFingerprint;
  /** klbr's runtime compiled once per version: every workbench imports it from there once built. */
  readonly bytecode: RuntimeBytecode;
  /** Every workbench start (cold, restart, spare) passes here: a burst of sessions queues, it does not storm. */
  readonly starts: StartGate;
  /** Workers started cold (not on a spare) since the host started. */
  coldStarts = 0;

  constructor(private readonly deps: WorkbenchesDeps) {
    const settings = deps.launch.settings;
    const runtime = (this.runtime = new RuntimeFingerprint(settings.pythonDir));
    const gate = (this.starts = new StartGate(deps.startConcurrency));
    this.bytecode = new RuntimeBytecode({
      python: settings.python,
      pythonDir: settings.pythonDir,
      dir: deps.bytecodeDir === undefined ? defaultBytecodeDir() : deps.bytecodeDir,
      onError: (error) => noteIncident(deps.store, "bytecode.build_failed", { error: error.message }, deps.now()),
    });
    // The sandbox settings are fixed for the host's life (they are the host's constructor options).
    const sandbox = JSON.stringify(settings.sandbox.describe());
    this.spares = new SparePool({
      count: deps.spares ?? 0,
      stopping: () => deps.life.stopping,
      reindex: () => deps.skills.reindex(),
      options: (index) => this.spareOptions(index),
      // The runtime on disk and what every start shares (sandbox, flags): a spare must match both.
      fingerprint: () => `${runtime.value()} ${sandbox}`,
      gate,
      onError: (error) => noteIncident(deps.store, "spare.start_failed", { error: error.message }, deps.now()),
    });
  }

  /** Build the runtime's bytecode now unless it is there (the host's start awaits it before its first workbench). */
  async prepareBytecode(): Promise<void> {
    await this.bytecode.prepare(this.runtime.value());
  }

  /** The session's workbench, if it was ever started. */
  get(sessionId: string): Workbench | undefined {
    return this.benches.get(sessionId);
  }

  /** Every workbench, in the order sessions first started one. */
  all(): Workbench[] {
    return [...this.benches.values()];
  }

  /** The sessions with a workbench. */
  sessionIds(): string[] {
    return [...this.benches.keys()];
  }

  /** Whether a session is closed for good (peer.stop). */
  closed(sessionId: string): boolean {
    return this.closedSessions.has(sessionId);
  }

  /** Close a session for good: from now on no cell starts there. */
  markClosed(sessionId: string): void {
    this.closedSessions.add(sessionId);
  }

  /**
   * The session's next generation starts for `reason` (kernel.reset): its namespace is gone (C21
   * failover). Cells finds no live worker and starts one for it, as after a cull.
   */
  markEnded(sessionId: string, reason: string): void {
    let bench = this.benches.get(sessionId);
    if (!bench) this.benches.set(sessionId, (bench = new Workbench(sessionId)));
    bench.endedFor = reason;
  }

  /** A stopped peer's session runs no cell again: its workbench would come back to life. */
  refuseClosed(sessionId: string): void {
    if (this.closedSessions.has(sessionId)) throw new HostError("SESSION_STOPPED", `session ${sessionId} is stopped (peer.stop); it runs no more cells`);
  }

  /** The session's workbench, its first generation started (in the foreground slot) when it has none. */
  async ensure(sessionId: string, reason: string): Promise<Workbench> {
    const { bench, release } = await this.ensureHeld(sessionId, reason);
    release();
    return bench;
  }

  /**
   * The session's workbench with its foreground slot held (a cell's turn), its first generation
   * started in that slot when it has none. The start's claim is the caller's turn: a cell that
   * arrives while the first generation starts queues behind it. Given back between the start and
   * the first cell, a second cell that arrived meanwhile took the slot first and ran first.
   */
  async ensureHeld(sessionId: string, reason: string): Promise<{ bench: Workbench; release: () => void }> {
    const existing = this.benches.get(sessionId);
    if (existing) return { bench: existing, release: await existing.acquire() };
    const bench = new Workbench(sessionId);
    this.benches.set(sessionId, bench);
    // Start the first generation in the foreground slot: a concurrent first cell of the session
    // queues behind it instead of finding no worker and starting a second one.
    const release = await bench.acquire();
    try {
      await this.restart(bench, reason);
    } catch (error) {
      release();
      throw error;
    }
    return { bench, release };
  }

  /** Replace the workbench's worker by a new generation (the old one shut down first); `reason` goes into kernel.reset. */
  async restart(bench: Workbench, reason: string): Promise<void> {
    if (bench.worker && bench.worker.state !== "dead") await bench.worker.shutdown();
    await this.startGeneration(bench, reason);
  }

  /** Start a new generation: re-index skills, start the worker on them, record kernel.reset and the header. */
  async startGeneration(bench: Workbench, reason: string): Promise<void> {
    const { store, life } = this.deps;
    // Before anything of the start: no spare is taken and no generation counted for a session lost here.
    this.refuseUnheld(bench.sessionId);
    const generation = await this.nextGeneration(bench.sessionId);
    const early = this.bindEarly(bench, generation);
    let index: SkillIndex;
    try {
      index = await this.deps.skills.reindex();
      life.refuseWhenStopping(`workbench ${bench.sessionId}`);
    } catch (error) {
      early?.abandon("spare_unused");
      throw error;
    }
    const starting = life.keepUnlessStopping(this.startWorker(bench, generation, index, early), `workbench ${bench.sessionId}`);
    // The header depends on the skill set alone: observed while the worker wakes up (a spare reads
    // its identity and says hello), not after it, where it was a third of a warm spare's first cell.
    const observing = this.observeHeader(bench.sessionId, index);
    const worker = await starting;
    if (!this.mayStart(bench.sessionId)) {
      // Lost while its worker came up: the loss killed the tree it knew, not this one. Nothing of it is recorded.
      await worker.hardStop("lease_lost").catch(() => undefined);
      this.refuseUnheld(bench.sessionId);
    }
    bench.worker = worker;
    watchLimitDeath(store, () => this.deps.now(), bench, worker);
    bench.skills = index;
    bench.endedFor = null;
    bench.culledAtMs = null;
    await noteRuntimeVersion(store, worker, { role: "workbench", sessionId: bench.sessionId }, this.deps.now());
    const skills = (worker.hello as { skills?: string | null }).skills ?? null;
    await store.recordKernelReset({ sessionId: bench.sessionId, generation, skillsRevision: skills, pid: worker.pid, reason, atMs: this.deps.now() });
    // A header that could not be observed fails the start after its kernel.reset, as it always did.
    const observeFailed = await observing;
    if (observeFailed !== null) throw observeFailed;
    this.deps.notify({ type: "kernel.reset", session_id: bench.sessionId, generation, skills, at_ms: this.deps.now() });
  }

  /** Whether the session may start a generation on this host now (see WorkbenchesDeps.mayStart). */
  mayStart(sessionId: string): boolean {
    return this.deps.mayStart?.(sessionId) ?? true;
  }

  /**
   * A session this host lost (C21) starts no generation here: its kernel.reset would be written
   * outside the fence and its worker run under no lease. The next claim of it starts one as usual.
   */
  private refuseUnheld(sessionId: string): void {
    if (!this.mayStart(sessionId)) throw new HostError("SESSION_NOT_HELD", `session ${sessionId} is not held by this host (its lease was lost); no workbench generation starts here`);
  }

  /** Observe the session's header for a generation on `index`; resolves to the error it threw, if any (thrown once the worker is in place). */
  private async observeHeader(sessionId: string, index: SkillIndex): Promise<unknown> {
    try {
      await this.deps.headers.observeGeneration(sessionId, (adopted) => this.deps.skills.sources(index, adopted));
      return null;
    } catch (error) {
      return error ?? new Error("the header could not be observed");
    }
  }

  /**
   * A spare current for the last skill index, bound to the generation at once, while the roots are
   * indexed again: the index (file-system calls, about 1 ms) and the spare's wake-up overlap instead
   * of following each other. {@link startWorker} keeps it only when the new index has the same
   * revision; otherwise it is stopped and the generation starts on the new set (C4 holds either way).
   */
  private bindEarly(bench: Workbench, generation: string): EarlyBind | null {
    const last = this.deps.skills.lastIndex;
    // The replacement spare starts once this session's first cell ended (or shortly after, see SparePool.take).
    const spare = last ? this.spares.take(last, bench.whenIdle()) : null;
    if (!last || !spare) return null;
    const worker = spare.bind(bench.sessionId, generation);
    worker.catch(() => undefined); // a failed bind is recorded where it is awaited (startWorker)
    return {
      revision: last.revision,
      worker,
      abandon: (reason) => {
        this.spares.takenUnused();
        void worker.then((w) => w.hardStop(reason), () => undefined);
      },
    };
  }

  /** The generation's worker: a current warm spare bound to it when one is ready, else a cold start. */
  private async startWorker(bench: Workbench, generation: string, index: SkillIndex, early: EarlyBind | null): Promise<Worker> {
    const sessionId = bench.sessionId;
    let binding: Promise<Worker> | null = null;
    if (early && early.revision === index.revision) binding = early.worker;
    else if (early) {
      // The skills changed since the spare was made: it never runs a cell of this generation.
      early.abandon("spare_stale");
    } else {
      binding = this.spares.take(index, bench.whenIdle())?.bind(sessionId, generation) ?? null;
    }
    if (binding) {
      try {
        return await binding;
      } catch (error) {
        // It died between the check and the bind: the cold start below is what it would have saved.
        await this.deps.store.recordIncident("spare.bind_failed", { session_id: sessionId, generation, error: (error as Error).message }, this.deps.now());
      }
    }
    const options = this.workerOptions(sessionId, generation, index);
    return this.starts.run(() => {
      // A start that waited for its turn while the host began to stop never spawns: a stop with
      // hundreds of starts queued would otherwise start and shut down each one in turn.
      this.deps.life.refuseWhenStopping(`workbench ${sessionId}`);
      this.coldStarts += 1;
      return startWorker(options);
    });
  }

  /** How one workbench generation's worker is started: the command, its skills, sandbox, environment and graces. */
  workerOptions(sessionId: string, generation: string, index: SkillIndex): StartWorkerOptions {
    return { ...this.spareOptions(index), role: "workbench", sessionId, generation };
  }

  /** The options of a workbench on `index` without its identity: a spare's, and every cold start's. */
  private spareOptions(index: SkillIndex): SpareOptions {
    const { launch } = this.deps;
    const common = launch.common();
    // Built for the runtime as it is now, or null (then the worker compiles klbr's modules itself).
    const bytecode = this.bytecode.current(this.runtime.value());
    return {
      ...common,
      ...(bytecode !== null ? { pythonPath: [bytecode, ...(common.pythonPath ?? [])] } : {}),
      materialize: (dir: string) => this.deps.skills.materialize(index, dir),
      expect: { revision: null, skills: index.revision },
      sandbox: launch.settings.sandbox.worker(bytecode !== null ? [bytecode] : []),
      onHostReply: (event) => this.deps.onHostReply(event),
      ...launch.graces(),
      ...launch.live(),
      ...launch.display(),
    };
  }

  /** The skill set the session's current generation loaded. */
  skillSet(sessionId: string): SkillIndex {
    const index = this.benches.get(sessionId)?.skills;
    if (!index) throw new ReplyError("unavailable", `session ${sessionId} has no workbench generation with a skill set`);
    return index;
  }

  /** Whether a session's workbench runs no cell and has none queued. */
  idle(sessionId: string): boolean {
    const bench = this.benches.get(sessionId);
    return !bench || bench.idle;
  }

  /** Stop a session's workbench: after the cell it runs (drain, in the foreground slot), or hard-stopped now with it. */
  async stop(sessionId: string, drain: boolean): Promise<void> {
    const bench = this.benches.get(sessionId);
    if (!bench) return;
    if (drain) {
      const release = await bench.acquire();
      try {
        if (bench.worker && bench.worker.state !== "dead" && !this.deps.life.stopping) await bench.worker.shutdown();
      } finally {
        release();
      }
    } else if (bench.worker && bench.worker.state !== "dead") {
      await bench.worker.hardStop("peer.stop");
    }
  }

  /** Every workbench worker (the host shuts them down when it stops). */
  workers(): Worker[] {
    return this.all().flatMap((bench) => (bench.worker ? [bench.worker] : []));
  }

  /** The next generation id of a session, counted on from the last kernel.reset in the log. */
  private async nextGeneration(sessionId: string): Promise<string> {
    const previous = await this.deps.store.lastKernelReset(sessionId);
    return `g-${(previous ? Number(previous.generation.replace(/^g-/, "")) || 0 : 0) + 1}`;
  }
}
