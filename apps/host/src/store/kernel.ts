import { desc, eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { placeholder, preparedPerConnection } from "./prepared";
import { kernelResets } from "../db/schema";

/** One kernel.reset row. */
export type KernelResetRow = typeof kernelResets.$inferSelect;

// Every workbench generation's start runs both statements (a warm spare's first cell waits on
// them): prepared once per connection (prepared.ts), as the execution statements are;
// built through drizzle on each call they cost about 0.6-0.9 ms each, 0.1 ms prepared.
function prepare(db: HostDb) {
  const p = placeholder;
  return {
    record: db
      .insert(kernelResets)
      .values({ sessionId: p("sessionId"), generation: p("generation"), skillsRevision: p("skillsRevision"), pid: p("pid"), reason: p("reason"), atMs: p("atMs") })
      .returning()
      .prepare(),
    last: db.select().from(kernelResets).where(eq(kernelResets.sessionId, p("sessionId"))).orderBy(desc(kernelResets.id)).limit(1).prepare(),
  };
}

const statements = preparedPerConnection(prepare);

/** Record kernel.reset: a new workbench generation and the skill set revision its hello echoed. */
export function recordKernelReset(db: HostDb, row: typeof kernelResets.$inferInsert): KernelResetRow {
  const { sessionId, generation, reason, atMs } = row;
  return statements(db).record.get({ sessionId, generation, skillsRevision: row.skillsRevision ?? null, pid: row.pid ?? null, reason, atMs }) as KernelResetRow;
}

/** How many generations a session has had; the next one is numbered after them. */
export function lastKernelReset(db: HostDb, sessionId: string): KernelResetRow | undefined {
  return statements(db).last.get({ sessionId }) as KernelResetRow | undefined;
}
