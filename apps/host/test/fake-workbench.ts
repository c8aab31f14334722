import { fileURLToPath } from "node:url";
import { startWorker, type Worker } from "@klbr/supervisor";
import type { Host } from "../src/runtime/host";

/** The supervisor's scripted fake workbench (packages/supervisor/test/fakes/requests.mjs). */
export const FAKE_REQUESTS = fileURLToPath(new URL("../../../packages/supervisor/test/fakes/requests.mjs", import.meta.url));

/**
 * Put a fake worker in place of a session's workbench worker, wired like the host wires its own
 * (its replies go to the host's request log), so the host's own checks meet a worker that does
 * what the Python runtime refuses to do. The real worker is shut down first.
 */
export async function attachFakeWorkbench(host: Host, sessionId: string, generation: string): Promise<Worker> {
  const bench = host.workbenches.get(sessionId);
  if (!bench) throw new Error(`no workbench for session ${sessionId}`);
  await bench.worker?.shutdown();
  bench.worker = await startWorker({
    role: "workbench",
    sessionId,
    generation,
    command: [process.execPath, FAKE_REQUESTS],
    handshakeTimeoutMs: 10_000,
    onHostReply: (event) => host.requestLog.replied(event),
  });
  return bench.worker;
}
