import { formatStamp } from "@klbr/transcript";
import type { Store } from "../store/api";
import type { SandboxView } from "../sandbox/settings";
import type { LimitsView } from "../limits/host-limits";
import { workItemView } from "../store/work-items";
import type { HooksService } from "./hooks-service";
import { ROOT_SESSION } from "./ids";
import type { SkillsService } from "./skills-service";
import type { Turns } from "./turns";
import type { Workbench } from "./workbench";
import type { Workbenches } from "./workbenches";

/** What the status views read of the host. */
export interface StatusDeps {
  store: Pick<Store, "pendingInputs" | "openWorkItems" | "adoptedScopes" | "currentSources" | "allPeers" | "peerView">;
  dataDir: string;
  workspace: string;
  startedAtMs: number;
  now(): number;
  sandbox: { describe(): SandboxView };
  /** The C17 limits in force (null until the start prepared them). */
  limits(): { describe(): LimitsView } | null;
  hooks: Pick<HooksService, "current" | "info">;
  workbenches: Pick<Workbenches, "get" | "all" | "sessionIds">;
  skills: Pick<SkillsService, "revision" | "liveRevision">;
  /** The model turns, when this host drives sessions. */
  turns(): Pick<Turns, "route"> | null;
  remote: { status(): Promise<unknown> };
  /** Whether workbenches stream live output (C16). */
  liveOutput: boolean;
  /** Warm spares and idle culling (C19). */
  pool(): WorkbenchPoolView;
}

/** `workbench_pool` of `klbr status` (C19): spares kept and ready, the idle timeout, live, idle and culled workbenches. */
export interface WorkbenchPoolView {
  spare: { target: number; ready: number; pids: number[] };
  idle_timeout_ms: number | null;
  /** Workbenches with a live worker. */
  live: number;
  /** Live workbenches with nothing running (idle for any time; culled after the timeout). */
  idle: number;
  /** Workbenches culled since the host started. */
  culled: number;
}

/** Read-only views of the host: `klbr status` and runtime.inspect (C8). */
export class Status {
  constructor(private readonly deps: StatusDeps) {}

  /** runtime.inspect (C8); `skills_revision` is the generation's set, `skills_live_revision` the roots now. */
  async inspect(sessionId: string): Promise<unknown> {
    const { deps } = this;
    const now = deps.now();
    const bench = deps.workbenches.get(sessionId);
    return {
      now: formatStamp(now),
      now_ms: now,
      session_id: sessionId,
      generation: bench?.generation ?? null,
      workbench_pid: bench?.worker?.pid ?? null,
      hooks: deps.hooks.info(),
      skills_revision: bench?.skills?.revision ?? null,
      skills_live_revision: await deps.skills.liveRevision(),
      workspace: deps.workspace,
      host_started_at_ms: deps.startedAtMs,
      sandbox: deps.sandbox.describe(),
      limits: deps.limits()?.describe() ?? null,
      // The current generation's CPU time and peak memory so far (C17); the model's cells never show them.
      usage: bench?.worker && bench.worker.state !== "dead" ? generationUsage(bench.worker.usage()) : null,
    };
  }

  /** Workers, generations, epoch, skills revision and tails, for `klbr status`. */
  async status(): Promise<unknown> {
    const { deps } = this;
    const { store, sandbox } = deps;
    // The log's part first: the live state below is read after the last await, as it is now.
    const pending = (await store.pendingInputs(ROOT_SESSION)).length;
    const workItems = (await store.openWorkItems()).map(workItemView);
    const orientation: unknown[] = [];
    for (const scope of await store.adoptedScopes()) orientation.push({ scope, sources: await store.currentSources(scope) });
    const remote = await deps.remote.status();
    const sessions = await this.sessions();
    const hooks = deps.hooks.current;
    const turns = deps.turns();
    return {
      data_dir: deps.dataDir,
      workspace: deps.workspace,
      started_at_ms: deps.startedAtMs,
      sandbox: sandbox.describe(),
      limits: deps.limits()?.describe() ?? null,
      live_output: deps.liveOutput,
      hooks: hooks
        ? { pid: hooks.worker.pid, generation: hooks.worker.generation, state: hooks.worker.state, revision: hooks.revision, epoch: hooks.epoch, sandbox: sandbox.describe(), stderr_tail: hooks.worker.stderrTail }
        : null,
      workbenches: deps.workbenches.all().map((b) => ({
        session_id: b.sessionId,
        generation: b.generation,
        pid: b.worker?.pid ?? null,
        ...benchState(b),
        running: b.live?.id ?? null,
        sandbox: sandbox.describe(),
        stdout_tail: b.worker?.stdoutTail ?? "",
        stderr_tail: b.worker?.stderrTail ?? "",
        skills_revision: b.skills?.revision ?? null,
      })),
      // The root generation's set; the live index only under its own field (as last indexed).
      skills_revision: deps.workbenches.get(ROOT_SESSION)?.skills?.revision ?? null,
      skills_live_revision: deps.skills.revision,
      driving: turns ? { route: turns.route.name, api: turns.route.api, model: turns.route.model } : null,
      pending_inputs: pending,
      open_work_items: workItems,
      orientation,
      ...sessions,
      remote,
      workbench_pool: deps.pool(),
    };
  }

  /** Every session this host knows (the root, each peer, any other with a workbench) and every peer. */
  private async sessions(): Promise<{ sessions: unknown[]; peers: unknown[] }> {
    const { store, workbenches } = this.deps;
    const peers = await store.allPeers();
    const pending = new Map<string, number>();
    const views: unknown[] = [];
    for (const p of peers) views.push({ ...(await store.peerView(p)), opener_session_id: p.openerSessionId });
    const bySession = new Map(peers.map((p) => [p.sessionId, p]));
    const ids = [ROOT_SESSION, ...peers.map((p) => p.sessionId), ...workbenches.sessionIds().filter((id) => id !== ROOT_SESSION && !bySession.has(id))];
    for (const id of ids) pending.set(id, (await store.pendingInputs(id)).length);
    const sessions = ids.map((id) => {
      const peer = bySession.get(id);
      const bench = workbenches.get(id);
      return {
        session_id: id,
        kind: id === ROOT_SESSION ? "root" : peer ? "peer" : "session",
        status: peer ? peer.status : "open",
        peer_id: peer?.id ?? null,
        opener_session_id: peer?.openerSessionId ?? null,
        generation: bench?.generation ?? null,
        ...(bench ? benchState(bench) : { state: "not_started", culled_at_ms: null }),
        running: bench?.live?.id ?? null,
        pending_inputs: pending.get(id)!,
      };
    });
    return { sessions, peers: views };
  }
}

/**
 * A workbench's state for `klbr status`: the worker's, and `culled` (with when) for a worker idle
 * culling shut down (C19), so an operator tells a cull from a crash; `dead` is a worker that died.
 */
function benchState(bench: Workbench): { state: string; culled_at_ms: number | null } {
  const worker = bench.worker;
  if (bench.culledAtMs !== null && (!worker || worker.state === "dead")) return { state: "culled", culled_at_ms: bench.culledAtMs };
  return { state: worker?.state ?? "dead", culled_at_ms: null };
}

/** runtime.inspect's usage: snake_case, as every reply. */
function generationUsage(usage: { cpuMs: number | null; peakRssBytes: number | null }): { cpu_ms: number | null; peak_rss_bytes: number | null } {
  return { cpu_ms: usage.cpuMs, peak_rss_bytes: usage.peakRssBytes };
}
