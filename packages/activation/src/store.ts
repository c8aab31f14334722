import type Database from "better-sqlite3";
import { asc, and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate as runMigrations } from "drizzle-orm/better-sqlite3/migrator";
import { ActivationError, isActivationError, type ActivationErrorCode } from "./errors.js";
import { DIGEST_PATTERN } from "./limits.js";
import { ACTIVATION_MIGRATIONS_TABLE, activationMigrationsFolder } from "./migrations.js";
import { verifyRelease, type Release } from "./release.js";
import { activationHistory, activationState } from "./schema.js";

/** The active revision: the epoch is the authority, digest and path name the release it points at. */
export interface ActiveRevision {
  /** 1 after the first activation, +1 on each one after. */
  epoch: number;
  /** The release digest. */
  digest: string;
  /** The release directory. */
  path: string;
  /** When the switch committed (ms since the epoch). */
  activatedAtMs: number;
}

/** How an activation attempt ended. */
export type ActivationOutcome = "activated" | "refused" | "conflict";

/** One row of the activation history. */
export interface ActivationRecord {
  /** Increasing id, in decision order. */
  id: number;
  /** When the attempt was decided (ms since the epoch). */
  atMs: number;
  /** The epoch the caller expected. */
  expectedEpoch: number;
  /** The active epoch when the attempt was decided. */
  epochBefore: number;
  /** The active epoch after it (epochBefore + 1 only when activated). */
  epochAfter: number;
  /** The release digest, when the path named one. */
  digest: string | null;
  /** The release path as given. */
  path: string;
  /** activated, refused (bad release or handshake) or conflict (stale expectedEpoch). */
  outcome: ActivationOutcome;
  /** The ActivationError code of a refusal or conflict; null when activated. */
  code: string | null;
  /** The refusal message; null when activated. */
  message: string | null;
}

/** What `activate` is asked to do: switch to the release at `path` if the epoch is still `expectedEpoch`. */
export interface ActivateRequest {
  /** A release directory `<releases>/<digest>`. */
  path: string;
  /** The epoch the caller saw; 0 before the first activation. */
  expectedEpoch: number;
}

/** The caller's check of a candidate (the host starts a hooks worker and validates its hello); throw to refuse. */
export type Handshake = (release: Release, options: { signal: AbortSignal }) => Promise<void>;

/** Options of one activation. */
export interface ActivateOptions {
  /** The handshake budget; past it the attempt is refused with ACTIVATION_HANDSHAKE_TIMEOUT and the signal aborts. */
  handshakeTimeoutMs?: number;
}

/** The epoch store over one better-sqlite3 connection (the caller owns it; see openDatabase). */
export interface ActivationStore {
  /** Apply this package's migrations (its own migrations table). */
  migrate(): void;
  /** The active revision, or null before the first activation. */
  current(): ActiveRevision | null;
  /**
   * Verify the release, run the handshake, then switch with one compare-and-swap on the epoch in an
   * IMMEDIATE transaction. Every attempt is appended to the history. Throws ActivationError
   * (ACTIVATION_EPOCH_CONFLICT, ACTIVATION_HANDSHAKE_FAILED/TIMEOUT, RELEASE_*, SOURCE_*, MANIFEST_*).
   */
  activate(request: ActivateRequest, handshake: Handshake, options?: ActivateOptions): Promise<ActiveRevision>;
  /** Every attempt, oldest first. */
  history(): ActivationRecord[];
}

/** Options of the store. */
export interface ActivationStoreOptions {
  /** The clock for `at_ms` / `activated_at_ms` (default Date.now). */
  now?: () => number;
}

/** The default handshake budget (ms). */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

const STATE_ID = 1;

/** The ACTIVATION_EPOCH_CONFLICT a stale `expectedEpoch` gets (exported so other epoch stores word it the same). */
export function conflictError(expected: number, actual: number): ActivationError {
  return new ActivationError(
    "ACTIVATION_EPOCH_CONFLICT",
    `expected epoch ${expected} but the active epoch is ${actual}; read current() and decide again`,
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Run the caller's handshake within `timeoutMs`: ACTIVATION_HANDSHAKE_TIMEOUT past it (the signal
 * aborts), ACTIVATION_HANDSHAKE_FAILED when it throws. Exported so an epoch store over another
 * database (the host's PostgreSQL one) refuses candidates exactly as this one does.
 */
export async function runHandshake(release: Release, handshake: Handshake, timeoutMs: number): Promise<void> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ActivationError("ACTIVATION_HANDSHAKE_TIMEOUT", `handshake for release ${release.digest} did not finish within ${timeoutMs} ms`, { path: release.path });
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(() => handshake(release, { signal: controller.signal })), timeout]);
  } catch (error) {
    if (isActivationError(error) && error.code === "ACTIVATION_HANDSHAKE_TIMEOUT") throw error;
    throw new ActivationError("ACTIVATION_HANDSHAKE_FAILED", `handshake for release ${release.digest} failed: ${describe(error)}`, { path: release.path, cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** Open the activation store on a connection the caller owns (WAL and busy timeout are the caller's: see openDatabase). */
export function openActivationStore(sqlite: Database.Database, options: ActivationStoreOptions = {}): ActivationStore {
  const db = drizzle(sqlite);
  const now = options.now ?? Date.now;

  const readEpoch = (): number =>
    db.select({ epoch: activationState.epoch }).from(activationState).where(eq(activationState.id, STATE_ID)).get()?.epoch ?? 0;

  const record = (row: Omit<ActivationRecord, "id" | "atMs">): void => {
    db.insert(activationHistory).values({ ...row, atMs: now() }).run();
  };

  const refuse = (request: ActivateRequest, digest: string | null, error: unknown): never => {
    const code: ActivationErrorCode | null = isActivationError(error) ? error.code : null;
    sqlite
      .transaction(() => {
        const epoch = readEpoch();
        record({ expectedEpoch: request.expectedEpoch, epochBefore: epoch, epochAfter: epoch, digest, path: request.path, outcome: code === "ACTIVATION_EPOCH_CONFLICT" ? "conflict" : "refused", code: code ?? "INTERNAL", message: describe(error) });
      })
      .immediate();
    throw error;
  };

  return {
    migrate() {
      runMigrations(db, { migrationsFolder: activationMigrationsFolder, migrationsTable: ACTIVATION_MIGRATIONS_TABLE });
    },

    current() {
      const row = db.select().from(activationState).where(eq(activationState.id, STATE_ID)).get();
      if (row === undefined || row.epoch === 0 || row.digest === null || row.path === null) return null;
      return { epoch: row.epoch, digest: row.digest, path: row.path, activatedAtMs: row.activatedAtMs ?? 0 };
    },

    async activate(request, handshake, activateOptions = {}) {
      const { path, expectedEpoch } = request;
      // Stryker disable next-line StringLiteral: any fallback that is not a digest leaves claimed null, as "" does
      const named = path.split(/[\\/]/).filter(Boolean).pop() ?? "";
      const claimed = DIGEST_PATTERN.test(named) ? named : null;
      if (!Number.isSafeInteger(expectedEpoch) || expectedEpoch < 0) {
        // Recorded like any refusal; the column holds integers, so a value that is not one is kept as -1 (the message names it).
        const error = new ActivationError("ACTIVATION_BAD_EPOCH", `expectedEpoch must be an integer >= 0, got ${String(expectedEpoch)}`);
        return refuse({ path, expectedEpoch: Number.isSafeInteger(expectedEpoch) ? expectedEpoch : -1 }, claimed, error);
      }

      let release: Release;
      try {
        release = verifyRelease(path);
      } catch (error) {
        return refuse(request, claimed, error);
      }
      // A stale caller learns it before a worker is started for nothing; the CAS below decides anyway.
      const seen = readEpoch();
      if (seen !== expectedEpoch) return refuse(request, release.digest, conflictError(expectedEpoch, seen));
      try {
        await runHandshake(release, handshake, activateOptions.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS);
      } catch (error) {
        return refuse(request, release.digest, error);
      }

      type Decided = { won: true; revision: ActiveRevision } | { won: false; actual: number };
      const swap = sqlite.transaction((): Decided => {
        const at = now();
        db.insert(activationState).values({ id: STATE_ID, epoch: 0 }).onConflictDoNothing().run();
        const swapped = db
          .update(activationState)
          .set({ epoch: expectedEpoch + 1, digest: release.digest, path, activatedAtMs: at })
          .where(and(eq(activationState.id, STATE_ID), eq(activationState.epoch, expectedEpoch)))
          .run();
        if (swapped.changes !== 1) {
          const actual = readEpoch();
          const error = conflictError(expectedEpoch, actual);
          record({ expectedEpoch, epochBefore: actual, epochAfter: actual, digest: release.digest, path, outcome: "conflict", code: error.code, message: error.message });
          return { won: false, actual };
        }
        record({ expectedEpoch, epochBefore: expectedEpoch, epochAfter: expectedEpoch + 1, digest: release.digest, path, outcome: "activated", code: null, message: null });
        return { won: true, revision: { epoch: expectedEpoch + 1, digest: release.digest, path, activatedAtMs: at } };
      });
      let outcome: Decided;
      try {
        outcome = swap.immediate();
      } catch (error) {
        // The switch itself failed (the lock stayed busy past the timeout, a disk error) and rolled
        // back: nothing changed, and the attempt still belongs in the history.
        return refuse(request, release.digest, error);
      }
      if (!outcome.won) throw conflictError(expectedEpoch, outcome.actual);
      return outcome.revision;
    },

    history() {
      return db
        .select()
        .from(activationHistory)
        .orderBy(asc(activationHistory.id))
        .all()
        .map((row) => ({ ...row, outcome: row.outcome as ActivationOutcome }));
    },
  };
}
