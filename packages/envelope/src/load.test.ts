// Loading the package runs its module-level code (every schema is built at import). Imported
// inside a test, a module that throws while loading fails here by name; imported at the top of a
// test file, it would only make that file fail to load, with no test failing.
import { describe, expect, it } from "vitest";

describe("loading", () => {
  it("imports the package entry and every schema module without throwing", async () => {
    const api = await import("./index.js");
    expect(api.HOST_REQUEST_METHODS).toContain("workspace.run");
    expect(api.parseHostRequest({ method: "hooks.list" })).toEqual({ method: "hooks.list" });
    for (const load of [() => import("./host-request.js"), () => import("./message.js"), () => import("./hook.js"), () => import("./reply.js")]) {
      await expect(load()).resolves.toBeDefined();
    }
  });
});
