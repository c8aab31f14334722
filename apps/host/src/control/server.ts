import { chmodSync, existsSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { ATTENTION_SOURCES, isIdentifier } from "@klbr/envelope";
import { FrameDecoder } from "@klbr/frame";
import { HostError } from "../errors";
import type { Host } from "../runtime/host";
import type { LiveOutputHub } from "../runtime/live-output";
import { blobReply } from "./blob-get";
import { fitFrame } from "./fit";
import { ConnectionLiveOutput } from "./live";
import { logPage } from "./log-page";
import { LOG_PAGE_DEFAULT_SIZE, LOG_PAGE_MAX_SIZE, MAX_SOCKET_PATH_BYTES, type ControlMessage, type ControlRequest } from "./protocol";

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

/**
 * Serve the control socket (0600) for the CLI: exec, say, interrupt, status, subscribe, and live
 * output (C16) from `live` when the host streams it (exec with `live`, watch_output).
 */
export async function serveControl(host: Host, path: string, live?: LiveOutputHub): Promise<Server> {
  checkControlSocketPath(path);
  if (existsSync(path)) {
    if (await probeSocket(path)) throw new HostError("HOST_ALREADY_RUNNING", `a klbr daemon already answers on ${path}`);
    unlinkSync(path);
  }
  const server = createServer((socket) => handleConnection(host, socket, live));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return server;
}

function handleConnection(host: Host, socket: Socket, hub: LiveOutputHub | undefined): void {
  const decoder = new FrameDecoder();
  let unsubscribe: (() => void) | null = null;
  // Fitted to one frame: a reply or event past 1 MiB is cut or refused, never thrown (it would end the daemon).
  const send = (message: ControlMessage) => {
    const frame = socket.destroyed ? null : fitFrame(message);
    if (frame) socket.write(frame);
  };
  const live = new ConnectionLiveOutput(hub, socket, send);
  const refuse = (id: number | null, error: { code?: string; message: string }) =>
    send({ id, ok: false, error: { code: error.code ?? "CONTROL_REQUEST_FAILED", message: error.message } });
  socket.on("data", (chunk) => {
    let frames: unknown[];
    try {
      frames = decoder.push(chunk);
    } catch (error) {
      // The stream cannot be resynchronised after a bad frame: say why, then hang up.
      refuse(null, new HostError("CONTROL_PROTOCOL", `bad control frame: ${(error as Error).message}`));
      socket.end();
      return;
    }
    for (const frame of frames) {
      let req: ControlRequest;
      try {
        req = checkRequest(frame);
      } catch (error) {
        refuse(idOf(frame), error as HostError);
        continue;
      }
      if (req.op === "subscribe") {
        unsubscribe ??= host.subscribe((event) => send({ event }));
        send({ id: req.id, ok: true, value: null });
        continue;
      }
      if (req.op === "watch_output") {
        live.watch({ ...(req.execution_id ? { executionId: req.execution_id } : {}), ...(req.session ? { sessionId: req.session } : {}) });
        send({ id: req.id, ok: true, value: { live: live.available } });
        continue;
      }
      // Every output of the cell precedes its completion (C16), so the watch ends with the reply.
      const executionId = req.op === "exec" && req.live && req.execution_id ? req.execution_id : undefined;
      const watching = executionId !== undefined ? live.watch({ executionId }) : undefined;
      const stop = () => {
        watching?.();
        if (executionId !== undefined) live.settle(executionId);
      };
      answer(host, req).then(
        (value) => {
          stop();
          send({ id: req.id, ok: true, value });
        },
        (error: Error & { code?: string }) => {
          stop();
          refuse(req.id, error);
        },
      );
    }
  });
  socket.on("close", () => {
    unsubscribe?.();
    live.close();
  });
  socket.on("error", () => socket.destroy());
}

/** The request id of a frame when it has a usable one, so even a refusal can be matched. */
function idOf(frame: unknown): number | null {
  const id = (frame as { id?: unknown } | null)?.id;
  return Number.isSafeInteger(id) ? (id as number) : null;
}

function protocolError(message: string): HostError {
  return new HostError("CONTROL_PROTOCOL", message);
}

function optionalString(req: Record<string, unknown>, field: string, check?: (v: string) => boolean, what = "a string"): void {
  const value = req[field];
  if (value === undefined) return;
  if (typeof value !== "string" || (check && !check(value))) {
    throw protocolError(`${String(req.op)}: ${field} must be ${what}, got ${JSON.stringify(value)}`);
  }
}

function positiveInteger(req: Record<string, unknown>, field: string, max = Number.MAX_SAFE_INTEGER): void {
  const value = req[field];
  if (value === undefined) return;
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > max) {
    throw protocolError(`${String(req.op)}: ${field} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`);
  }
}

/** Validate one control request; anything else is refused with CONTROL_PROTOCOL naming the value. */
export function checkRequest(frame: unknown): ControlRequest {
  if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
    throw protocolError(`a control request must be an object, got ${JSON.stringify(frame)}`);
  }
  const req = frame as Record<string, unknown>;
  if (!Number.isSafeInteger(req.id)) throw protocolError(`a control request needs an integer id, got ${JSON.stringify(req.id)}`);
  const session = (v: string) => isIdentifier(v);
  switch (req.op) {
    case "exec":
      if (typeof req.code !== "string") throw protocolError(`exec needs a code string, got ${JSON.stringify(req.code)}`);
      optionalString(req, "session", session, "an identifier");
      optionalString(req, "execution_id", session, "an identifier");
      if (req.live !== undefined && typeof req.live !== "boolean") throw protocolError(`exec: live must be a boolean, got ${JSON.stringify(req.live)}`);
      if (req.live && req.execution_id === undefined) throw protocolError("exec: live output needs the execution_id the events will name");
      optionalString(req, "origin", (v) => /^[a-z][a-z0-9_.-]{0,31}$/.test(v), 'a short lower-case name ("exec", "model", "mcp", "web", ...)');
      break;
    case "blob_get":
      if (typeof req.digest !== "string") throw protocolError(`blob_get needs a digest string, got ${JSON.stringify(req.digest)}`);
      break;
    case "watch_output":
      optionalString(req, "execution_id", session, "an identifier");
      optionalString(req, "session", session, "an identifier");
      break;
    case "refuse_cell":
      if (!Number.isSafeInteger(req.bytes) || (req.bytes as number) < 0) throw protocolError(`refuse_cell needs a byte count, got ${JSON.stringify(req.bytes)}`);
      optionalString(req, "session", session, "an identifier");
      break;
    case "say":
      if (typeof req.text !== "string") throw protocolError(`say needs a text string, got ${JSON.stringify(req.text)}`);
      optionalString(req, "source", (v) => (ATTENTION_SOURCES as readonly string[]).includes(v), `one of ${ATTENTION_SOURCES.join(", ")}`);
      optionalString(req, "session", session, "an identifier");
      break;
    case "interrupt":
      optionalString(req, "execution_id", session, "an identifier");
      optionalString(req, "session", session, "an identifier");
      break;
    case "stop_turn":
      optionalString(req, "session", session, "an identifier");
      break;
    case "log_page":
      if (typeof req.session !== "string" || !isIdentifier(req.session)) throw protocolError(`log_page needs a session identifier, got ${JSON.stringify(req.session)}`);
      positiveInteger(req, "page");
      positiveInteger(req, "page_size", LOG_PAGE_MAX_SIZE);
      break;
    case "status":
    case "subscribe":
      break;
    default:
      throw protocolError(`unknown control operation ${JSON.stringify(req.op)}`);
  }
  return req as unknown as ControlRequest;
}

async function answer(host: Host, req: ControlRequest): Promise<unknown> {
  switch (req.op) {
    case "exec":
      // A client that names its cell can interrupt exactly it (Ctrl-C), queued or running.
      return host.execute(req.code, req.session, { ...(req.execution_id ? { executionId: req.execution_id } : {}), origin: req.origin ?? "exec" });
    case "blob_get":
      return blobReply(host.store, req.digest);
    case "refuse_cell":
      return host.refuseCell(req.session ?? "root", req.bytes);
    case "say":
      return host.postInput(req.text, { ...(req.source ? { source: req.source } : {}), ...(req.session ? { sessionId: req.session } : {}) });
    case "interrupt":
      return host.interrupt({
        ...(req.execution_id ? { executionId: req.execution_id } : {}),
        ...(req.session ? { sessionId: req.session } : {}),
      });
    case "stop_turn":
      return { stopping: host.turns?.stopTurn(req.session ?? "root") ?? false };
    case "status":
      return host.statusReply();
    case "log_page":
      return logPage(host.store, req.session, req.page ?? 1, req.page_size ?? LOG_PAGE_DEFAULT_SIZE);
    default:
      throw protocolError(`unknown control operation ${JSON.stringify((req as { op?: unknown }).op)}`);
  }
}
