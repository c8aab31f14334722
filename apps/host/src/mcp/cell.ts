// One `python` call: a cell in a session's workbench through the control API, named by an
// execution id this server chose, so that exactly it is interrupted when the client cancels the
// call (notifications/cancelled), the call's timeout_s elapses, or the client goes away.
import { randomBytes } from "node:crypto";
import { MAX_CELL_SOURCE_BYTES } from "@klbr/driver";
import type { CallToolResult, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { setTimeout as sleep } from "node:timers/promises";
import type { ControlClient } from "../control/client";
import { HostError } from "../errors";
import type { DaemonLink } from "./daemon";
import { cellResult, failureResult, type ExecReply } from "./result";
import { callError, type PythonArgs } from "./tools";

/** What a call handler gets from the SDK that a cell uses. */
export interface CallContext {
  signal: AbortSignal;
  progressToken?: string | number;
  sendNotification(notification: ServerNotification): Promise<void>;
}

/** How long after its last progress notification a call's result is held back (see streamProgress). */
const SETTLE_MS = 15;

/** A pushed live-output event of the control API (C16). */
interface LiveEvent {
  type: "output";
  execution_id: string;
  stream: "stdout" | "stderr";
  text: string;
  dropped_bytes: number;
}

function isLiveEvent(event: unknown, executionId: string): event is LiveEvent {
  const e = event as Partial<LiveEvent> | null;
  return typeof e === "object" && e !== null && e.type === "output" && e.execution_id === executionId && typeof e.text === "string";
}

/** This process's part of its execution ids: random once, so a call costs no random bytes. */
const ID_PREFIX = `ex-mcp-${randomBytes(6).toString("hex")}`;
let idCount = 0;

/** An execution id of this server's (the control API accepts any identifier), unique across processes. */
export function newExecutionId(): string {
  idCount += 1;
  return `${ID_PREFIX}-${idCount.toString(36)}`;
}

/** Run one checked `python` call in `session`; resolves to its MCP result (a failed cell is `isError`, not a throw). */
export async function runCell(link: DaemonLink, args: PythonArgs, session: string, call: CallContext): Promise<CallToolResult> {
  const bytes = Buffer.byteLength(args.code);
  let client: ControlClient;
  try {
    client = await link.client();
  } catch (error) {
    return failureResult((error as HostError).code ?? "HOST_NOT_RUNNING", (error as Error).message);
  }
  if (bytes > MAX_CELL_SOURCE_BYTES) {
    // Recorded by the daemon as any refused cell is (a cell.refused incident), then a call error.
    const refusal = await client.request({ op: "refuse_cell", bytes, session }).catch((error: HostError) => error);
    const e = refusal as HostError;
    throw callError(e.code ?? "CELL_TOO_LARGE", e.message ?? `the cell is ${bytes} bytes; at most ${MAX_CELL_SOURCE_BYTES}`);
  }
  const executionId = newExecutionId();
  const notes: string[] = [];
  let interrupting: Promise<unknown> | null = null;
  const interrupt = (why: string) => {
    if (interrupting) return;
    notes.push(why);
    interrupting = client.request({ op: "interrupt", execution_id: executionId }).catch(() => undefined);
  };
  const onAbort = () => interrupt("[the client cancelled the call: the cell was interrupted]");
  const timer = args.timeout_s !== undefined ? setTimeout(() => interrupt(`[timeout_s=${args.timeout_s} elapsed: the cell was interrupted]`), args.timeout_s * 1000) : undefined;
  const progress = call.progressToken !== undefined ? streamProgress(client, executionId, call) : undefined;
  call.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const running = client.request({ op: "exec", code: args.code, session, execution_id: executionId, origin: "mcp", ...(progress ? { live: true } : {}) });
    // Only after the exec is written: the daemon takes requests in order, and an interrupt of an
    // execution it was not yet asked to run finds nothing (the cell would then run unbounded).
    if (call.signal.aborted) onAbort();
    const reply = (await running) as ExecReply;
    // Every notification goes out before the result: a client forgets a call's progress token once answered.
    await progress?.();
    await progress?.settle();
    return await cellResult(reply, (digest) => client.request({ op: "blob_get", digest }) as Promise<{ media_type: string; base64: string }>, notes);
  } catch (error) {
    const e = error as HostError;
    if (e.code === "HOST_NOT_RUNNING") {
      return failureResult(e.code, `${e.message} while cell ${executionId} ran; its record is closed by the next daemon's recovery, and the next call starts a daemon again`);
    }
    return failureResult(e.code ?? "CONTROL_REQUEST_FAILED", e.message);
  } finally {
    clearTimeout(timer);
    call.signal.removeEventListener("abort", onAbort);
    await progress?.();
    await interrupting;
  }
}

/**
 * Each live output event of the execution as a notifications/progress: `progress` counts the
 * events (it must rise), `message` is the text the cell wrote. Returns the stop, which resolves
 * once every notification was handed to the transport, in order.
 */
function streamProgress(client: ControlClient, executionId: string, call: CallContext): (() => Promise<void>) & { settle: () => Promise<void> } {
  let count = 0;
  let lastAt = 0;
  let sent = Promise.resolve();
  const stop = client.listen((event) => {
    if (!isLiveEvent(event, executionId)) return;
    const dropped = event.dropped_bytes > 0 ? `[${event.dropped_bytes} bytes of live output were not streamed]\n` : "";
    count += 1;
    const note = { method: "notifications/progress" as const, params: { progressToken: call.progressToken!, progress: count, message: `${dropped}${event.text}` } };
    sent = sent
      .then(() => call.sendNotification(note))
      .then(() => void (lastAt = performance.now()))
      .catch(() => undefined);
  });
  const done = () => {
    stop();
    return sent;
  };
  /**
   * The TS SDK's client hands a notification to its handler a microtask later but drops a call's
   * progress handler at once when the response is read: a last notification read in the same chunk
   * as the response is lost. A response written a moment after the last notification is read apart.
   */
  done.settle = async () => {
    const wait = lastAt === 0 ? 0 : SETTLE_MS - (performance.now() - lastAt);
    if (wait > 0) await sleep(wait);
  };
  return done;
}
