import { expect, test } from "vitest";
import { parseListen } from "./listen";

test("--listen takes HOST:PORT, [IPv6]:PORT and PORT (loopback), and refuses anything else as CLI_USAGE", () => {
  expect(parseListen("127.0.0.1:8765")).toEqual({ host: "127.0.0.1", port: 8765 });
  expect(parseListen("localhost:0")).toEqual({ host: "localhost", port: 0 });
  expect(parseListen("[::1]:9000")).toEqual({ host: "::1", port: 9000 });
  expect(parseListen("9000")).toEqual({ host: "127.0.0.1", port: 9000 });
  for (const bad of ["", ":", "host:", "1.2.3.4:70000", "a b:1", "::1:80", "http://x:1"]) {
    expect(() => parseListen(bad)).toThrow(expect.objectContaining({ code: "CLI_USAGE" }));
  }
});
