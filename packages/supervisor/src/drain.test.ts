import { spawn } from "node:child_process";
import { once } from "node:events";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { drainInto } from "./drain.js";
import { ByteTail } from "./tail.js";

describe("drainInto", () => {
  it("drains a child's pipe to EOF into the tail, keeping the last bytes", async () => {
    const child = spawn("sh", ["-c", "head -c 3000000 /dev/zero | tr '\\0' z; printf END"], { stdio: ["ignore", "pipe", "ignore"] });
    const tail = new ByteTail(16);
    drainInto(child.stdout, tail);
    await once(child.stdout!, "close");
    expect(tail.totalBytes).toBe(3_000_003);
    expect(tail.text()).toBe("zzzzzzzzzzzzzEND");
  });

  it("falls back to 'data' events for a stream without a native handle", async () => {
    const stream = Readable.from([Buffer.from("abc"), Buffer.from("def")]);
    const tail = new ByteTail(4);
    drainInto(stream, tail);
    await once(stream, "end");
    expect(tail.text()).toBe("cdef");
  });
});
