// A host that starts a real Python worker whose cell leaves an escaped orphan (environment
// cleared, its own session), then stops itself (SIGSTOP: it can no longer notice the host's end on
// its own), prints the worker's and the orphan's pids, and waits to be killed.
import { fileURLToPath } from "node:url";
import { startWorker } from "../../src/index.js";
import { readProc } from "../../src/tree.js";

const worker = await startWorker({
  role: "workbench",
  sessionId: "s",
  generation: "g",
  pythonPath: [fileURLToPath(new URL("../../../../python", import.meta.url))],
});
await worker.execute("import subprocess\nsubprocess.run(['/bin/sh', '-c', 'setsid sleep 1000 & echo \"escaped $!\" >&2'], env={})");
for (let i = 0; i < 500 && !/escaped \d+/.test(worker.stderrTail); i++) await new Promise((r) => setTimeout(r, 10));
const orphan = Number(/escaped (\d+)/.exec(worker.stderrTail)?.[1] ?? 0);
void worker.execute("import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)");
for (let i = 0; i < 500 && readProc(worker.pid)?.state !== "T"; i++) await new Promise((r) => setTimeout(r, 10));
console.log(JSON.stringify({ pids: [worker.pid, orphan] }));
setInterval(() => undefined, 1000);
