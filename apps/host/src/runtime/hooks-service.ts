import { startWorker, type HookSlot, type Worker } from "@klbr/supervisor";
import type { HookOutcome, LiveExecution } from "./live-execution";
import type { IncidentsStore } from "../store/api";
import type { AsyncActivationStore } from "../store/activation/api";
import { BehaviourManager, type ReleaseRef } from "./behaviour";
import type { HooksGeneration } from "./hooks-generation";
import { newId } from "./ids";
import type { HostLife } from "./lifecycle";
import type { Notify } from "./notifier";
import { HooksInvokes, hooksDeathReason, watchHooksLimitDeath } from "./limit-death";
import { noteRuntimeVersion } from "./version-check";
import type { WorkerLaunch } from "./worker-launch";

/** The session hooks workers are started under. */
const HOOKS_SESSION = "root";

export type { HooksGeneration };

/** The active revision as runtime.inspect and hooks.* show it. */
export interface HooksInfo {
  revision: string;
  epoch: number;
  path: string;
  hooks: Record<string, string>;
}

/** What the hooks service uses of the host. */
export interface HooksDeps {
  /** The activation authority and the releases by digest (C21: either database). */
  activation: AsyncActivationStore;
  /** The log: the hooks worker's incidents go through it. */
  store: IncidentsStore;
  now(): number;
  notify: Notify["notify"];
  life: Pick<HostLife, "stopping" | "refuseWhenStopping" | "keepUnlessStopping">;
  launch: WorkerLaunch;
  releasesDir: string;
  /** The default behaviour source, released and activated on first start. */
  defaultSource: string;
}

/**
 * The active behaviour revision and the hooks worker serving it. A cell that used a hook keeps
 * using the same revision until it ends, even if an activation switches the active one meanwhile;
 * a retired generation is shut down when its last pin is released. A dead worker is replaced on
 * the same release before the next invocation.
 */
export class HooksService {
  private active: HooksGeneration | null = null;
  private readonly behaviour: BehaviourManager;
  /** The replacement of a dead hooks worker under way, shared by every caller that found it dead. */
  private restarting: Promise<void> | null = null;
  /** Which workers an invoke was out on when they died (a limit there is that invoke's failure). */
  private readonly invokes = new HooksInvokes();

  constructor(private readonly deps: HooksDeps) {
    this.behaviour = new BehaviourManager(deps.activation, deps.releasesDir, deps.defaultSource, (release) => this.spawn(release));
  }

  /** The active generation, if any. */
  get current(): HooksGeneration | null {
    return this.active;
  }

  /** Start the hooks worker on the active release (the default source's first). */
  async start(): Promise<void> {
    const gen = await this.behaviour.startActive();
    if (gen) this.install(gen);
  }

  /** Install a new active generation; the old one retires when no cell pins it. */
  install(gen: HooksGeneration): void {
    const old = this.active;
    this.active = gen;
    if (old) {
      old.retired = true;
      if (old.pinnedBy.size === 0) this.retire(old);
    }
  }

  /** The active behaviour revision and its manifest entrypoints. */
  info(): HooksInfo | null {
    const gen = this.active;
    return gen ? { revision: gen.revision, epoch: gen.epoch, path: gen.path, hooks: gen.hooks } : null;
  }

  /** Invoke a decision slot for a cell (pinning its revision) or for the host (`live` null); a dead worker is replaced first. */
  async invoke(live: LiveExecution | null, slot: HookSlot, input: unknown): Promise<HookOutcome> {
    const current = this.active;
    if (current && current.worker.state === "dead" && !live?.hooksPin && !this.deps.life.stopping) {
      try {
        await this.restart(current);
      } catch (error) {
        return { ok: false, reason: `hooks worker could not be restarted: ${(error as Error).message}`, revision: current.revision };
      }
    }
    let gen = (live?.hooksPin as HooksGeneration | undefined) ?? this.active;
    if (!gen) return { ok: false, reason: "no behaviour revision is active", revision: null };
    if (live && !live.hooksPin) {
      live.hooksPin = gen;
      gen.pinnedBy.add(live.id);
    }
    if (gen.worker.state === "dead") return { ok: false, reason: "hooks worker is not running", revision: gen.revision };
    const { worker } = gen;
    const completion = await this.invokes.run(worker, () => worker.invoke(slot, input as never));
    if (completion.kind === "hook") return { ok: true, value: completion.value as Record<string, unknown>, revision: gen.revision };
    return { ok: false, reason: describeFailure(completion), revision: gen.revision };
  }

  /** A cell ended: release its pin, and shut a retired generation down once nobody uses it. */
  release(live: LiveExecution): void {
    const gen = live.hooksPin as HooksGeneration | undefined;
    if (!gen) return;
    gen.pinnedBy.delete(live.id);
    if (gen.retired && gen.pinnedBy.size === 0) this.retire(gen);
  }

  /** behavior.activate: candidate handshake first, then the compare-and-swap; the workbenches stay. */
  async activate(path: string, expectedEpoch: number): Promise<unknown> {
    const outcome = await this.behaviour.activate(path, expectedEpoch);
    this.install(outcome.generation);
    this.deps.notify({ type: "hooks", revision: outcome.generation.revision, epoch: outcome.generation.epoch, at_ms: this.deps.now() });
    return { epoch: outcome.generation.epoch, revision: outcome.generation.revision, path: outcome.generation.path };
  }

  /** Every hooks worker running or starting now (the host shuts them down when it stops). */
  workers(): Worker[] {
    return [...(this.active ? [this.active.worker] : []), ...this.behaviour.strayWorkers()];
  }

  /**
   * Replace a dead hooks worker on the same release, once for every caller that found it dead.
   * An activation that installed a new generation meanwhile wins: the replacement is discarded.
   */
  private restart(dead: HooksGeneration): Promise<void> {
    this.restarting ??= (async () => {
      // C17: a limit that ended the worker is the reason (as in a workbench's kernel.reset).
      await this.deps.store.recordIncident("hooks.restart", { revision: dead.revision, reason: (await hooksDeathReason(dead.worker)) ?? "worker not running" }, this.deps.now());
      const replacement = await this.spawn({ path: dead.path, digest: dead.revision, epoch: dead.epoch });
      if (this.active === dead) this.install(replacement);
      else await replacement.worker.shutdown().catch(() => undefined);
    })().finally(() => {
      this.restarting = null;
    });
    return this.restarting;
  }

  /** Start a hooks worker on a release and check that its hello names that release. */
  private async spawn(release: ReleaseRef): Promise<HooksGeneration> {
    const { life, launch, store } = this.deps;
    life.refuseWhenStopping("hooks");
    const worker = await life.keepUnlessStopping(
      startWorker({
        ...launch.common(),
        role: "hooks",
        sessionId: HOOKS_SESSION,
        generation: newId("h"),
        sourceDir: release.path,
        expect: { revision: release.digest, skills: null },
        // The release lies in the data directory, which the sandbox hides: exactly it shows, read-only.
        sandbox: launch.settings.sandbox.worker([release.path]),
      }),
      "hooks",
    );
    await noteRuntimeVersion(store, worker, { role: "hooks", sessionId: HOOKS_SESSION }, this.deps.now());
    const gen: HooksGeneration = { worker, revision: release.digest, epoch: release.epoch, path: release.path, hooks: this.behaviour.manifestHooks(release.path), pinnedBy: new Set(), retired: false };
    watchHooksLimitDeath(store, () => this.deps.now(), worker, release.digest, this.invokes);
    return gen;
  }

  private retire(gen: HooksGeneration): void {
    void gen.worker.shutdown().catch(() => undefined);
  }
}

function describeFailure(completion: { kind: string; error?: unknown; reason?: unknown }): string {
  const reason = typeof completion.reason === "string" ? completion.reason : "failed";
  const error = typeof completion.error === "string" ? completion.error : "";
  return error ? `${reason}: ${error}` : reason;
}
