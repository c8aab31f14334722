import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { addRoute, readRoutes, removeRoute } from "./routes-file";

const route = (name: string) => ({ name, api: "chat", base_url: "http://127.0.0.1:11434/v1", model: "m", api_key_env: null, context_tokens: 4096 });

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "klbr-routes-"));
  path = join(dir, "routes.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("routes.json on disk (C10 amended)", () => {
  test('"default": null is refused, never read as the first route', () => {
    writeFileSync(path, JSON.stringify({ default: null, routes: [route("a"), route("b")] }));
    expect(() => readRoutes(path)).toThrow(expect.objectContaining({ code: "DRIVER_INVALID_ROUTES", message: expect.stringContaining("got null") }));
    writeFileSync(path, JSON.stringify({ default: "c", routes: [route("a"), route("b")] }));
    expect(() => readRoutes(path)).toThrow(expect.objectContaining({ code: "DRIVER_INVALID_ROUTES", message: expect.stringContaining('got "c"') }));
  });

  test("add and remove keep a file that names its default; removing the last route removes the file", () => {
    expect(addRoute(path, route("a")).default).toBe("a");
    expect(addRoute(path, route("b")).default).toBe("a");
    expect(readRoutes(path).default).toBe("a");
    expect(removeRoute(path, "a").default).toBe("b");
    expect(readRoutes(path)).toMatchObject({ default: "b", routes: [{ name: "b" }] });
    expect(removeRoute(path, "b")).toEqual({ default: null, routes: [] });
    expect(existsSync(path)).toBe(false);
    expect(readRoutes(path)).toEqual({ default: null, routes: [] });
  });
});
