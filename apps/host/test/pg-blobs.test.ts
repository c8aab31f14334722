// C20's blob design in PostgreSQL (C21): the same content-addressed rows as SQLite, bytea holding
// the exact bytes (every byte value, a 100 KiB image), a second copy of a digest never written,
// and a display's blobs with the execution's list in one transaction (rolled back together).
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migratePostgres, openPostgres, type PgHost } from "../src/db/pg-open";
import { blobs, executions } from "../src/db/pg-schema";
import { blobDigest } from "../src/store/blobs";

let db: Awaited<ReturnType<typeof testDatabase>>;
let host: PgHost | undefined;
beforeAll(async () => {
  db = await testDatabase();
  if (db.skip) return;
  host = openPostgres(db.url!, { max: 2 });
  await migratePostgres(host.pool);
});
afterAll(async () => {
  await host?.close();
  await db?.stop();
});

test("bytes round-trip exactly, stored once by digest; blobs and the execution's list commit or roll back together", async (ctx) => {
  if (db.skip) return ctx.skip(db.skip);
  const pg = host!.db;
  const image = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from([...Array(256).keys()]), randomBytes(100 * 1024)]);
  const digest = blobDigest(image);
  const row = { digest, mediaType: "image/png", bytes: image.length, data: image, createdAtMs: 1 };
  await pg.insert(blobs).values(row).onConflictDoNothing();
  await pg.insert(blobs).values({ ...row, createdAtMs: 2 }).onConflictDoNothing();
  const stored = await pg.select().from(blobs).where(eq(blobs.digest, digest));
  expect(stored).toHaveLength(1);
  expect(stored[0]!.createdAtMs).toBe(1);
  expect(Buffer.compare(stored[0]!.data, image)).toBe(0);
  expect(blobDigest(stored[0]!.data)).toBe(digest);

  await pg.insert(executions).values({ id: "ex-pg-1", sessionId: "root", generation: "g-1", code: "display(x)", status: "running", startedAtMs: 1, origin: "exec" });
  const other = randomBytes(64);
  await expect(
    pg.transaction(async (tx) => {
      await tx.insert(blobs).values({ digest: blobDigest(other), mediaType: "image/png", bytes: other.length, data: other, createdAtMs: 3 });
      await tx.update(executions).set({ displays: [{ seq: 0, digest: blobDigest(other) }] }).where(eq(executions.id, "ex-pg-1"));
      throw new Error("the host died mid-display");
    }),
  ).rejects.toThrow("mid-display");
  expect(await pg.select().from(blobs).where(eq(blobs.digest, blobDigest(other)))).toHaveLength(0);
  expect((await pg.select().from(executions).where(eq(executions.id, "ex-pg-1")))[0]!.displays).toBeNull();
});
