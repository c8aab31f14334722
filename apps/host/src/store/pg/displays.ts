import { eq } from "drizzle-orm";
import { executions } from "../../db/pg-schema";
import type { DisplaysStore } from "../api/displays";
import type { PgContext } from "./context";
import { putBlobOn } from "./blobs";

/** DisplaysStore over PostgreSQL: a display's blobs and the execution's new list in one fenced transaction. */
export function pgDisplays(c: PgContext): DisplaysStore {
  return {
    storeDisplay: (sessionId, executionId, display, listed, atMs) =>
      c.write(sessionId, async (tx) => {
        for (const blob of display.blobs) await putBlobOn(tx, blob, atMs);
        await tx.update(executions).set({ displays: listed }).where(eq(executions.id, executionId));
      }),
  };
}
