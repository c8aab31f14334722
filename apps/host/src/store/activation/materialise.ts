import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ActivationError, snapshotRelease, type Snapshot } from "@klbr/activation";
import type { AsyncActivationStore } from "./api";

/**
 * Make `<releasesDir>/<digest>` from the database (C21), for a host that did not build the release.
 * The stored files are written to a scratch draft and snapshotted as any draft is: admitted,
 * digested, written read-only and renamed into place (an existing identical release is reused),
 * so what this writes is exactly what activation verifies. A stored tree whose digest is not the
 * one asked for is RELEASE_DIGEST_MISMATCH, and nothing is left in releasesDir.
 */
export async function materialiseRelease(store: Pick<AsyncActivationStore, "getRelease">, digest: string, releasesDir: string): Promise<Snapshot> {
  const stored = await store.getRelease(digest);
  const draft = mkdtempSync(join(tmpdir(), "klbr-materialise-"));
  try {
    for (const file of stored.files) {
      const target = join(draft, file.name);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, file.data);
    }
    const snapshot = snapshotRelease(draft, releasesDir);
    if (snapshot.digest !== digest) {
      throw new ActivationError("RELEASE_DIGEST_MISMATCH", `stored release ${digest} materialised as a tree with digest ${snapshot.digest}`, { path: snapshot.path });
    }
    return snapshot;
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
}
