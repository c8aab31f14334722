import { and, asc, eq, inArray } from "drizzle-orm";
import {
  ActivationError,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DIGEST_PATTERN,
  conflictError,
  isActivationError,
  runHandshake,
  verifyRelease,
  type ActivateRequest,
  type ActivationOutcome,
  type ActivationRecord,
  type ActivationStoreOptions,
  type ActiveRevision,
  type Release,
} from "@klbr/activation";
import type { PgHost } from "../../db/pg-open";
import { activationHistory, activationState } from "../../db/pg-schema-activation";
import { blobs, releases } from "../../db/pg-schema";
import { putBlobOn } from "../pg/blobs";
import { pgRead, pgTransaction, type PgTxDb } from "../pg/tx";
import type { AsyncActivationStore } from "./api";
import { releaseNotFound, releaseRows, storedRelease } from "./release-rows";

const STATE_ID = 1;

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The state row, created at epoch 0 if missing, locked FOR UPDATE: every decision (a switch, a
 * refusal) holds it, so decisions are made one at a time and their history ids follow their
 * order, as SQLite's BEGIN IMMEDIATE makes them in @klbr/activation's store.
 */
async function lockEpoch(tx: PgTxDb): Promise<number> {
  await tx.insert(activationState).values({ id: STATE_ID, epoch: 0 }).onConflictDoNothing();
  const rows = await tx.select({ epoch: activationState.epoch }).from(activationState).where(eq(activationState.id, STATE_ID)).for("update");
  return rows[0]!.epoch;
}

/**
 * AsyncActivationStore over PostgreSQL (C21): the epoch store of @klbr/activation (store.ts) with the
 * same steps, outcomes, codes and messages, on the tables of pg-schema-activation.ts (the host's
 * migrations); releases by digest in `releases` and `blobs`. Many hosts share it: the compare-and-
 * swap is an UPDATE ... WHERE epoch = expected under the state row's lock, so of hosts racing on one
 * epoch exactly one switches. Writes go through pgTransaction (a dropped connection is retried, a
 * COMMIT whose reply was lost is looked up, never run twice).
 */
export function pgActivationStore(host: Pick<PgHost, "db" | "pool">, options: ActivationStoreOptions = {}): AsyncActivationStore {
  const { db, pool } = host;
  const now = options.now ?? Date.now;
  const write = <T>(fn: (tx: PgTxDb) => Promise<T>) => pgTransaction(pool, null, fn);

  const readEpoch = () => pgRead(async () => (await db.select({ epoch: activationState.epoch }).from(activationState).where(eq(activationState.id, STATE_ID)))[0]?.epoch ?? 0);

  const record = (tx: PgTxDb, row: Omit<ActivationRecord, "id" | "atMs">) => tx.insert(activationHistory).values({ ...row, atMs: now() });

  const refuse = async (request: ActivateRequest, digest: string | null, error: unknown): Promise<never> => {
    const code = isActivationError(error) ? error.code : null;
    await write(async (tx) => {
      const epoch = await lockEpoch(tx);
      await record(tx, { expectedEpoch: request.expectedEpoch, epochBefore: epoch, epochAfter: epoch, digest, path: request.path, outcome: code === "ACTIVATION_EPOCH_CONFLICT" ? "conflict" : "refused", code: code ?? "INTERNAL", message: describe(error) });
    });
    throw error;
  };

  return {
    async current() {
      const row = await pgRead(async () => (await db.select().from(activationState).where(eq(activationState.id, STATE_ID)))[0]);
      if (row === undefined || row.epoch === 0 || row.digest === null || row.path === null) return null;
      return { epoch: row.epoch, digest: row.digest, path: row.path, activatedAtMs: row.activatedAtMs ?? 0 };
    },

    async activate(request, handshake, activateOptions = {}) {
      const { path, expectedEpoch } = request;
      const named = path.split(/[\\/]/).filter(Boolean).pop() ?? "";
      const claimed = DIGEST_PATTERN.test(named) ? named : null;
      if (!Number.isSafeInteger(expectedEpoch) || expectedEpoch < 0) {
        const error = new ActivationError("ACTIVATION_BAD_EPOCH", `expectedEpoch must be an integer >= 0, got ${String(expectedEpoch)}`);
        return refuse({ path, expectedEpoch: Number.isSafeInteger(expectedEpoch) ? expectedEpoch : -1 }, claimed, error);
      }
      let release: Release;
      try {
        release = verifyRelease(path);
      } catch (error) {
        return refuse(request, claimed, error);
      }
      // A stale caller learns it before a worker is started for nothing; the swap below decides anyway.
      const seen = await readEpoch();
      if (seen !== expectedEpoch) return refuse(request, release.digest, conflictError(expectedEpoch, seen));
      try {
        await runHandshake(release, handshake, activateOptions.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS);
      } catch (error) {
        return refuse(request, release.digest, error);
      }

      type Decided = { won: true; revision: ActiveRevision } | { won: false; actual: number };
      let outcome: Decided;
      try {
        outcome = await write(async (tx): Promise<Decided> => {
          await lockEpoch(tx);
          const at = now();
          const swapped = await tx
            .update(activationState)
            .set({ epoch: expectedEpoch + 1, digest: release.digest, path, activatedAtMs: at })
            .where(and(eq(activationState.id, STATE_ID), eq(activationState.epoch, expectedEpoch)))
            .returning({ epoch: activationState.epoch });
          if (swapped.length !== 1) {
            const actual = (await tx.select({ epoch: activationState.epoch }).from(activationState).where(eq(activationState.id, STATE_ID)))[0]!.epoch;
            const error = conflictError(expectedEpoch, actual);
            await record(tx, { expectedEpoch, epochBefore: actual, epochAfter: actual, digest: release.digest, path, outcome: "conflict", code: error.code, message: error.message });
            return { won: false, actual };
          }
          await record(tx, { expectedEpoch, epochBefore: expectedEpoch, epochAfter: expectedEpoch + 1, digest: release.digest, path, outcome: "activated", code: null, message: null });
          return { won: true, revision: { epoch: expectedEpoch + 1, digest: release.digest, path, activatedAtMs: at } };
        });
      } catch (error) {
        // The switch itself failed (PostgreSQL gone past the reconnect deadline) and rolled back:
        // nothing changed, and the attempt still belongs in the history if it can be written.
        return refuse(request, release.digest, error);
      }
      if (!outcome.won) throw conflictError(expectedEpoch, outcome.actual);
      return outcome.revision;
    },

    async history() {
      const rows = await pgRead(() => db.select().from(activationHistory).orderBy(asc(activationHistory.id)));
      return rows.map((row) => ({ ...row, outcome: row.outcome as ActivationOutcome }));
    },

    async putRelease(release) {
      const { blobs: files, row } = releaseRows(release);
      return write(async (tx) => {
        const at = now();
        for (const blob of files) await putBlobOn(tx, blob, at);
        const inserted = await tx.insert(releases).values({ ...row, createdAtMs: at }).onConflictDoNothing().returning({ digest: releases.digest });
        return { stored: inserted.length === 1 };
      });
    },

    async getRelease(digest) {
      const row = (await pgRead(() => db.select().from(releases).where(eq(releases.digest, digest))))[0];
      if (row === undefined) throw releaseNotFound(digest);
      const names = [...new Set(row.files.map((f) => f.blob))];
      const found = await pgRead(() => db.select({ digest: blobs.digest, data: blobs.data }).from(blobs).where(inArray(blobs.digest, names)));
      return storedRelease(row, (blob) => found.find((b) => b.digest === blob)?.data);
    },
  };
}
