import { describe, expect, it } from "vitest";
import { cellsOf } from "./cells.js";
import { DriverError, isDriverError } from "./errors.js";
import { parseRoute } from "./routes.js";

// Argument and field checks at their edges (issue 25): values of the wrong type that would pass a
// check written only for the right one.
const base = { name: "r", api: "chat", base_url: "http://127.0.0.1:1/v1", model: "m", api_key_env: null, context_tokens: 1000 };

describe("cellsOf refuses arguments that are JSON but not an object with a string code", () => {
  it.each(["null", "5", "true", '"print(1)"', '["print(1)"]', '[{"code":"print(1)"}]', '{"code":1}', '{"code":null}'])("%s", (args) => {
    expect(cellsOf({ text: "", calls: [{ id: "c1", name: "python", arguments: args }], stop: null }, "tool")).toEqual([
      { call_id: "c1", refused: 'the arguments must be a JSON object with one string field "code"' },
    ]);
  });
});

describe("cellsOf fences", () => {
  it("takes a fence whose info string is python, py or python3 with spaces after it, not a longer word", () => {
    const fenced = (text: string) => cellsOf({ text, calls: [], stop: null }, "fence");
    expect(fenced("```python \t\nx = 1\n```")).toEqual([{ call_id: null, code: "x = 1\n" }]);
    expect(fenced("```py\r\nx = 1\n```")).toEqual([{ call_id: null, code: "x = 1\n" }]);
    expect(fenced("```pythonic\nx = 1\n```")).toEqual([]);
    expect(fenced("```python3x\nx = 1\n```")).toEqual([]);
  });
});

describe("DriverError and isDriverError edges", () => {
  it("has no own cause unless one is given", () => {
    expect(Object.hasOwn(new DriverError("DRIVER_ROUTE_FAILED", "m"), "cause")).toBe(false);
    expect(Object.hasOwn(new DriverError("DRIVER_ROUTE_FAILED", "m", { status: 500 }), "cause")).toBe(false);
    expect(Object.hasOwn(new DriverError("DRIVER_ROUTE_FAILED", "m", { cause: null }), "cause")).toBe(true);
  });

  it("is false for a function, even one carrying the brand", () => {
    const branded = Object.assign(() => 1, { [Symbol.for("@klbr/driver/error")]: true });
    expect(isDriverError(branded)).toBe(false);
    expect(isDriverError(Object.assign({}, { [Symbol.for("@klbr/driver/error")]: true }))).toBe(true);
  });
});

describe("parseRoute refuses a field of the wrong type that reads right as a string", () => {
  it.each([
    [{ ...base, name: 5 }, /name must be an identifier .*, got 5$/],
    [{ ...base, name: ["r"] }, /name must be an identifier .*, got \["r"\]$/],
    [{ ...base, base_url: ["http://127.0.0.1:1/v1"] }, /base_url must be an http\(s\) URL, got \["http:/],
    [{ ...base, base_url: "see http://127.0.0.1:1/v1" }, /base_url must be an http\(s\) URL, got "see http:/],
    [{ ...base, base_url: "http://" }, /base_url must be an http\(s\) URL, got "http:\/\/"$/],
    [{ ...base, api_key_env: ["KEY"] }, /api_key_env must be an environment variable name or null, got \["KEY"\]$/],
    [{ ...base, api_key_env: 1 }, /api_key_env must be an environment variable name or null, got 1$/],
  ])("%j", (route, message) => {
    expect(() => parseRoute(route)).toThrow(message);
  });

  it("accepts http and https URLs and reads an absent api_key_env as null", () => {
    expect(parseRoute({ ...base, base_url: "https://x" }).base_url).toBe("https://x");
    const { api_key_env: _, ...keyless } = base;
    expect(parseRoute(keyless).api_key_env).toBeNull();
  });
});
