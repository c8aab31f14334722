import type Database from "better-sqlite3";
import { isActivationError, openActivationStore, readManifest, type ActivationStore } from "@klbr/activation";
import type { Worker } from "@klbr/supervisor";
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
 * The behaviour side of the host: the epoch store (the only activation authority), the default
 * source released and activated at epoch 1 on first start, and candidate handshakes.
 */
export class BehaviourManager {
  private readonly store: ActivationStore;
  /** Candidate workers between their handshake and the switch, stopped with the host if it stops then. */
  private readonly candidates = new Set<Worker>();

  constructor(
    sqlite: Database.Database,
    private readonly releasesDir: string,
    private readonly defaultSource: string,
    private readonly spawn: (release: ReleaseRef) => Promise<HooksGeneration>,
  ) {
    this.store = openActivationStore(sqlite);
  }

  /** Apply the activation package's own migrations. */
  migrate(): void {
    this.store.migrate();
  }

  /** Start the hooks worker on the active release, releasing and activating the default source first if none is. */
  async startActive(): Promise<HooksGeneration | null> {
    const current = this.store.current();
    if (current) return this.spawn({ path: current.path, digest: current.digest, epoch: current.epoch });
    const release = snapshotDefaultSource(this.defaultSource, this.releasesDir);
    try {
      return (await this.activate(release.path, 0)).generation;
    } catch (error) {
      // Hosts first started at once on one new log (C21) race to activate their defaults: the
      // loser runs what the winner activated, as a host started after it does.
      const won = isEpochConflict(error) ? this.store.current() : null;
      if (!won) throw error;
      return this.spawn({ path: won.path, digest: won.digest, epoch: won.epoch });
    }
  }

  /** Handshake a candidate, then compare-and-swap the epoch; the candidate becomes the active generation. */
  async activate(path: string, expectedEpoch: number): Promise<{ generation: HooksGeneration }> {
    let candidate: HooksGeneration | null = null;
    try {
      const result = await this.store.activate({ path, expectedEpoch }, async (release, { signal }) => {
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
