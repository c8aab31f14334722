import type { HookSlot, Worker } from "@klbr/supervisor";
import type { HookOutcome, LiveExecution } from "../requests/context";

/** One running hooks worker bound to one activated release. */
export interface HooksGeneration {
  readonly worker: Worker;
  readonly revision: string;
  readonly epoch: number;
  readonly path: string;
  readonly hooks: Record<string, string>;
  /** Executions that used this revision and have not ended; the worker lives until they do. */
  readonly pinnedBy: Set<string>;
  retired: boolean;
}

/**
 * The active behaviour revision and the hooks worker serving it. A cell that used a hook keeps
 * using the same revision until it ends, even if an activation switches the active one meanwhile;
 * a retired generation is shut down when its last pin is released.
 */
export class HooksService {
  private active: HooksGeneration | null = null;

  constructor(private readonly onRetired: (gen: HooksGeneration) => void) {}

  /** The active generation, if any. */
  get current(): HooksGeneration | null {
    return this.active;
  }

  /** Install a new active generation; the old one retires when no cell pins it. */
  install(gen: HooksGeneration): void {
    const old = this.active;
    this.active = gen;
    if (old) {
      old.retired = true;
      if (old.pinnedBy.size === 0) this.onRetired(old);
    }
  }

  /** Invoke a slot for a cell (pinning its revision) or for the host itself (`live` null). */
  async invoke(live: LiveExecution | null, slot: HookSlot, input: unknown): Promise<HookOutcome> {
    let gen = (live?.hooksPin as HooksGeneration | undefined) ?? this.active;
    if (!gen) return { ok: false, reason: "no behaviour revision is active", revision: null };
    if (live && !live.hooksPin) {
      live.hooksPin = gen;
      gen.pinnedBy.add(live.id);
    }
    if (gen.worker.state === "dead") return { ok: false, reason: "hooks worker is not running", revision: gen.revision };
    const completion = await gen.worker.invoke(slot, input as never);
    if (completion.kind === "hook") return { ok: true, value: completion.value as Record<string, unknown>, revision: gen.revision };
    return { ok: false, reason: describeFailure(completion), revision: gen.revision };
  }

  /** A cell ended: release its pin, and shut a retired generation down once nobody uses it. */
  release(live: LiveExecution): void {
    const gen = live.hooksPin as HooksGeneration | undefined;
    if (!gen) return;
    gen.pinnedBy.delete(live.id);
    if (gen.retired && gen.pinnedBy.size === 0) this.onRetired(gen);
  }
}

function describeFailure(completion: { kind: string; error?: unknown; reason?: unknown }): string {
  const reason = typeof completion.reason === "string" ? completion.reason : "failed";
  const error = typeof completion.error === "string" ? completion.error : "";
  return error ? `${reason}: ${error}` : reason;
}
