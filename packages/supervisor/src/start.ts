import { chmod } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { SupervisorError } from "./errors.js";
import { IDENTIFIER } from "./operation.js";
import type { StartWorkerOptions, Worker } from "./options.js";
import { makePrivateDir, removePrivateDir } from "./private-dir.js";
import { WorkerProcess } from "./worker.js";

/**
 * Start a worker: private 0700 dir and socket, spawn in its own process group, accept one
 * connection, check its hello. Resolves once the worker is ready; on any failure the tree is
 * stopped, the directory removed, and a SupervisorError thrown.
 */
export async function startWorker(opts: StartWorkerOptions): Promise<Worker> {
  const worker = await prepareWorker(opts);
  await worker.start();
  return worker;
}

/** Check the options and make the worker's private dir, skills file and listening socket; nothing is spawned yet. */
export async function prepareWorker(opts: StartWorkerOptions): Promise<WorkerProcess> {
  checkStartOptions(opts);
  const { dir, socketPath } = await makePrivateDir();
  let materialized: string | undefined;
  let server: Server | undefined;
  try {
    if (opts.materialize) materialized = (await opts.materialize(dir)) ?? undefined;
    server = createServer();
    await new Promise<void>((resolve, reject) => {
      server!.once("error", reject);
      server!.listen(socketPath, () => {
        server!.off("error", reject);
        resolve();
      });
    });
    // Created with the umask (often 0755): only the worker may connect, so 0600 before it is spawned.
    await chmod(socketPath, 0o600);
  } catch (err) {
    server?.close();
    await removePrivateDir(dir);
    throw err;
  }
  return new WorkerProcess(opts, dir, socketPath, server, materialized);
}

function checkStartOptions(opts: StartWorkerOptions): void {
  if (opts.role !== "workbench" && opts.role !== "hooks") {
    throw new SupervisorError("WORKER_INVALID_ARGUMENT", `role must be workbench or hooks, got ${JSON.stringify(opts.role)}`);
  }
  for (const [name, value] of [["sessionId", opts.sessionId], ["generation", opts.generation]] as const) {
    if (typeof value !== "string" || !IDENTIFIER.test(value)) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `${name} ${JSON.stringify(value)} is not an identifier`);
    }
  }
  if (opts.command !== undefined && (opts.command.length === 0 || !opts.command[0])) {
    throw new SupervisorError("WORKER_INVALID_ARGUMENT", `command must name a program, got ${JSON.stringify(opts.command)}`);
  }
}
