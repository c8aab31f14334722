import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { hostRequests } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { resultOf, startTestHost } from "./helpers";

let host: Host;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ host, close } = await startTestHost());
});
afterAll(async () => close());

describe("evidence.resolve through a real cell", () => {
  test("20 refs to a 65 KB execution: the cell gets a bounded ok reply, and the log holds exactly that reply", async () => {
    const big = await host.execute("print('x' * 65_000)");
    expect(big.status).toBe("ok");
    const r = await host.execute(
      [
        `res = await runtime.resolve(['execution:${big.id}'] * 20)`,
        "(all(x['ok'] for x in res['results']), res['truncated_bytes'] > 0, sorted(res['results'][0]['value'])[:3])",
      ].join("\n"),
    );
    expect(r.status).toBe("ok");
    expect(resultOf(r)).toBe("(True, True, ['code', 'displays', 'displays_dropped'])");
    const [row] = host.db.select().from(hostRequests).where(eq(hostRequests.method, "evidence.resolve")).orderBy(desc(hostRequests.id)).limit(1).all();
    const reply = row!.reply as { kind: string; value: { truncated_bytes: number; results: unknown[] } };
    expect(reply.kind).toBe("ok");
    expect(reply.value.results).toHaveLength(20);
    expect(Buffer.byteLength(JSON.stringify(reply))).toBeLessThan(1_048_576);
  });
});
