// What both supervisor benches measure against: the ping-pong floor and the percentile.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

const ECHO = fileURLToPath(new URL("./echo.py", import.meta.url));
const now = () => performance.now();

/** The p-th percentile of `values` (nearest rank). */
export function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface PingPong {
  /** One length-prefixed JSON message to the echo and back; resolves with its milliseconds. */
  once(i: number): Promise<number>;
  close(): Promise<void>;
}

/** The baseline: plain length-prefixed JSON to a Python echo over a Unix socket, and back. */
export async function openPingPong(python: string): Promise<PingPong> {
  const dir = await mkdtemp(join(tmpdir(), "klbr-b-"));
  const path = join(dir, "e.sock");
  const server = createServer();
  await new Promise<void>((r) => server.listen(path, r));
  const child = execa(python, [ECHO, path], { stdin: "ignore", buffer: false, cleanup: true });
  const socket = await new Promise<Socket>((r) => server.once("connection", r));
  let pending: ((v: unknown) => void) | undefined;
  let buf = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const len = buf.readUInt32BE(0);
      const value = JSON.parse(buf.subarray(4, 4 + len).toString("utf8"));
      buf = buf.subarray(4 + len);
      pending?.(value);
    }
  });
  return {
    async once(i) {
      const message = { version: 1, session_id: "bench", generation: "g", message: { kind: "execute", id: `c-${i}`, code: "1+1" } };
      const body = Buffer.from(JSON.stringify(message));
      const head = Buffer.alloc(4);
      head.writeUInt32BE(body.length);
      const t = now();
      const got = new Promise((r) => (pending = r));
      socket.write(Buffer.concat([head, body]));
      await got;
      return now() - t;
    },
    async close() {
      socket.destroy();
      server.close();
      await child.catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
