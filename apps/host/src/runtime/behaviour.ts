import { isActivationError, readManifest, type ActiveRevision } from "@klbr/activation";
import type { Worker } from "@klbr/supervisor";
import type { AsyncActivationStore } from "../store/activation/api";
import { localRelease } from "./local-release";
import { ReplyError } from "../requests/errors";
import { snapshotDefaultSource } from "./default-source";
import type { HooksGeneration } from "./hooks-generation";

/** A release the host may start a hooks worker on. */
export interface ReleaseRef {
  path: string;
  digest: string;
  epoch: number;
}

/** Activation error codes and the host reply codes they become (C8). */
const REPLY_CODES: Record<string, string> = {
  ACTIVATION_EPOCH_CONFLICT: "epoch_conflict",
  ACTIVATION_HANDSHAKE_FAILED: "unavailable",
  ACTIVATION_HANDSHAKE_TIMEOUT: "timeout",
  SOURCE_NOT_FOUND: "not_found",
};

function isEpochConflict(error: unknown): boolean {
  return error instanceof ReplyError && isActivationError(error.cause) && error.cause.code === "ACTIVATION_EPOCH_CONFLICT";
}

/**
 * The behaviour side of the host: the epoch store (the only activation authority, shared by every
 * host on the database, C21), the default source released and activated at epoch 1 on first
 * start, and candidate handshakes. Every release a candidate is started on is stored by digest in
 * the database first, so any host can run the revision once it is active.
 */
export class BehaviourManager {
  /** Candidate workers between their handshake and the switch, stopped with the host if it stops then. */
  private readonly candidates = new Set<Worker>();

  constructor(
    private readonly store: AsyncActivationStore,
    private readonly releasesDir: string,
    private readonly defaultSource: string,
    private readonly spawn: (release: ReleaseRef) => Promise<HooksGeneration>,
  ) {}

  /** Start the hooks worker on the active release, releasing and activating the default source first if none is. */
  async startActive(): Promise<HooksGeneration | null> {
    const current = await this.store.current();
    if (current) return this.spawnActive(current);
    const release = snapshotDefaultSource(this.defaultSource, this.releasesDir);
    try {
      return (await this.activate(release.path, 0)).generation;
    } catch (error) {
      // Hosts first started at once on one new log (C21) race to activate their defaults: the
      // loser runs what the winner activated, as a host started after it does.
      const won = isEpochConflict(error) ? await this.store.current() : null;
      if (!won) throw error;
      return this.spawnActive(won);
    }
  }

  /** A hooks worker on the active revision, from this host's own copy of its release (made from the database when another host activated it). */
  private async spawnActive(active: ActiveRevision): Promise<HooksGeneration> {
    const path = await localRelease(this.store, active, this.releasesDir);
    return this.spawn({ path, digest: active.digest, epoch: active.epoch });
  }

  /** Handshake a candidate, then compare-and-swap the epoch; the candidate becomes the active generation. */
  async activate(path: string, expectedEpoch: number): Promise<{ generation: HooksGeneration }> {
    let candidate: HooksGeneration | null = null;
    try {
      const result = await this.store.activate({ path, expectedEpoch }, async (release, { signal }) => {
        // In the database before it can be active: another host that starts on it finds its files there.
        await this.store.putRelease(release);
        const gen = await this.spawn({ path: release.path, digest: release.digest, epoch: expectedEpoch + 1 });
        // A candidate that came up after the handshake budget ran out must not linger.
        if (signal.aborted) {
          await gen.worker.shutdown().catch(() => undefined);
          throw new Error("the candidate came up after the handshake budget");
        }
        candidate = gen;
        this.candidates.add(gen.worker);
      });
      const gen = candidate as HooksGeneration | null;
      if (!gen) throw new ReplyError("internal", "activation succeeded without a candidate worker");
      this.candidates.delete(gen.worker);
      return { generation: { ...gen, epoch: result.epoch } };
    } catch (error) {
      const gen = candidate as HooksGeneration | null;
      if (gen) {
        this.candidates.delete(gen.worker);
        await gen.worker.shutdown().catch(() => undefined);
      }
      if (error instanceof ReplyError) throw error;
      if (isActivationError(error)) {
        throw new ReplyError(REPLY_CODES[error.code] ?? "invalid_request", `${error.code}: ${error.message}`, { cause: error });
      }
      throw new ReplyError("unavailable", `candidate handshake failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /** The manifest entrypoints of a release. */
  manifestHooks(path: string): Record<string, string> {
    return { ...readManifest(path).hooks };
  }

  /** Candidate workers still starting (the host stops them if it stops first). */
  strayWorkers(): Worker[] {
    return [...this.candidates];
  }
}
