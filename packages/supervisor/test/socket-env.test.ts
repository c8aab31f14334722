import { describe, expect, it } from "vitest";
import { startFake } from "./helpers.js";

describe("what a worker is given", () => {
  it("its socket is 0600 before it connects, not only its 0700 directory (issue 10, item 7)", async () => {
    const worker = await startFake("probe");
    try {
      const done = await worker.execute("x");
      expect(done.kind === "cell" && JSON.parse(done.output[0]!.text).mode).toBe("600");
    } finally {
      await worker.shutdown();
    }
  });
});

describe("the worker's environment (issue 10, item 5)", () => {
  it("is the minimal base: a secret of the host's is not in it, a passed name is", async () => {
    process.env.KLBR_TEST_SECRET = "s3cret";
    process.env.KLBR_TEST_SHARED = "shared";
    try {
      const worker = await startFake("probe", { passEnv: ["KLBR_TEST_SHARED"] });
      try {
        const done = await worker.execute("x");
        const env = (done.kind === "cell" ? JSON.parse(done.output[0]!.text).env : {}) as Record<string, string>;
        expect(env.KLBR_TEST_SECRET).toBeUndefined();
        expect(env.KLBR_TEST_SHARED).toBe("shared");
        expect(env.PATH).toBe(process.env.PATH);
        const allowed = /^(PATH|HOME|LANG|LC_\w+|TZ|TMPDIR|PYTHONPATH|KLBR_TREE|KLBR_WORKER_TOKEN|KLBR_TEST_SHARED)$/;
        expect(Object.keys(env).filter((name) => !allowed.test(name))).toEqual([]);
      } finally {
        await worker.shutdown();
      }
    } finally {
      delete process.env.KLBR_TEST_SECRET;
      delete process.env.KLBR_TEST_SHARED;
    }
  });
});
