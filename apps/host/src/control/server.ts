import { chmodSync, existsSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { encodeFrame, FrameDecoder } from "@klbr/frame";
import { HostError } from "../errors";
import type { Host } from "../runtime/host";
import { MAX_SOCKET_PATH_BYTES, type ControlMessage, type ControlRequest } from "./protocol";

/** Refuse a socket path Node would truncate. */
export function checkControlSocketPath(path: string): void {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new HostError(
      "CONTROL_SOCKET_PATH_TOO_LONG",
      `control socket path ${JSON.stringify(path)} is ${Buffer.byteLength(path)} bytes; Unix sockets allow ${MAX_SOCKET_PATH_BYTES}: use a shorter KLBR_DATA_DIR`,
    );
  }
}

/** Whether something answers on a socket path (a live daemon) or it is a stale file. */
export function probeSocket(path: string, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const done = (alive: boolean) => {
      socket.destroy();
      resolve(alive);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    setTimeout(() => done(false), timeoutMs).unref();
  });
}

/** Serve the control socket (0600) for the CLI: exec, say, interrupt, status, subscribe. */
export async function serveControl(host: Host, path: string): Promise<Server> {
  checkControlSocketPath(path);
  if (existsSync(path)) {
    if (await probeSocket(path)) throw new HostError("HOST_ALREADY_RUNNING", `a klbr daemon already answers on ${path}`);
    unlinkSync(path);
  }
  const server = createServer((socket) => handleConnection(host, socket));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return server;
}

function handleConnection(host: Host, socket: Socket): void {
  const decoder = new FrameDecoder();
  let unsubscribe: (() => void) | null = null;
  const send = (message: ControlMessage) => {
    if (!socket.destroyed) socket.write(encodeFrame(message));
  };
  socket.on("data", (chunk) => {
    let requests: unknown[];
    try {
      requests = decoder.push(chunk);
    } catch {
      socket.destroy();
      return;
    }
    for (const request of requests) {
      const req = request as ControlRequest;
      if (req.op === "subscribe") {
        unsubscribe ??= host.subscribe((event) => send({ event }));
        send({ id: req.id, ok: true, value: null });
        continue;
      }
      answer(host, req).then(
        (value) => send({ id: req.id, ok: true, value }),
        (error: Error & { code?: string }) =>
          send({ id: req.id, ok: false, error: { code: error.code ?? "CONTROL_REQUEST_FAILED", message: error.message } }),
      );
    }
  });
  socket.on("close", () => unsubscribe?.());
  socket.on("error", () => socket.destroy());
}

async function answer(host: Host, req: ControlRequest): Promise<unknown> {
  switch (req.op) {
    case "exec":
      if (typeof req.code !== "string") throw new HostError("CONTROL_PROTOCOL", "exec needs a code string");
      return host.execute(req.code, req.session);
    case "say":
      if (typeof req.text !== "string") throw new HostError("CONTROL_PROTOCOL", "say needs a text string");
      return host.postInput(req.text, { ...(req.source ? { source: req.source } : {}), ...(req.session ? { sessionId: req.session } : {}) });
    case "interrupt":
      return host.interrupt({
        ...(req.execution_id ? { executionId: req.execution_id } : {}),
        ...(req.session ? { sessionId: req.session } : {}),
      });
    case "status":
      return host.status();
    default:
      throw new HostError("CONTROL_PROTOCOL", `unknown control operation ${JSON.stringify((req as { op?: unknown }).op)}`);
  }
}
