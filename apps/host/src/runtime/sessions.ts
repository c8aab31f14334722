import type { InstructionHeaders } from "./instructions";
import type { Stopping } from "./lifecycle";
import type { Notify } from "./notifier";
import type { SkillsService } from "./skills-service";
import type { Workbenches } from "./workbenches";

/** What the sessions service uses of the host. */
export interface SessionsDeps {
  now(): number;
  notify: Notify["notify"];
  life: Stopping;
  workbenches: Pick<Workbenches, "ensure" | "idle" | "markClosed" | "stop">;
  skills: Pick<SkillsService, "reindex" | "sources">;
  headers: Pick<InstructionHeaders, "observeGeneration">;
  /** The turn a driven session runs now, if any (null when the host drives no session). */
  turnOf(sessionId: string): Promise<void> | null;
}

/** Sessions opened and closed: a new session's header, its readiness for a model turn, whether it is idle, its stop. */
export class Sessions {
  constructor(private readonly deps: SessionsDeps) {}

  /** The session's workbench is up and its header pinned (a model turn's first request needs both). */
  async prepare(sessionId: string): Promise<void> {
    await this.deps.workbenches.ensure(sessionId, "session_start");
  }

  /** Pin a new session's header from the current instruction sources (a peer's, at peer.open). */
  async pin(sessionId: string): Promise<void> {
    const index = await this.deps.skills.reindex();
    await this.deps.headers.observeGeneration(sessionId, (adopted) => this.deps.skills.sources(index, adopted));
  }

  /** Whether a session's workbench runs no cell and has none queued, and no turn of it runs. */
  idle(sessionId: string): boolean {
    return this.deps.workbenches.idle(sessionId) && !this.deps.turnOf(sessionId);
  }

  /**
   * Close a session for good: refused for new cells from now; its workbench shut down after its
   * current turn and the cell it runs (drain), or hard-stopped at once, the running cell with it.
   * Resolves false when the host stopped first.
   */
  async close(sessionId: string, drain: boolean): Promise<boolean> {
    // Driven by a model, a draining session finishes its current turn first (C13); new sends are
    // refused meanwhile (the peer is `stopping`), so no new turn is asked for.
    const turn = drain ? this.deps.turnOf(sessionId) : null;
    if (turn) await turn.catch(() => undefined);
    this.deps.workbenches.markClosed(sessionId);
    await this.deps.workbenches.stop(sessionId, drain);
    if (this.deps.life.stopping) return false;
    this.deps.notify({ type: "session.stopped", session_id: sessionId, drain, at_ms: this.deps.now() });
    return true;
  }
}
