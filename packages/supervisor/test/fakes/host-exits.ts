// A host that starts a fake worker, prints its pid, and exits without stopping it: the
// supervisor's process 'exit' hook must take the worker's tree down with it.
import { fileURLToPath } from "node:url";
import { startWorker } from "../../src/index.js";

let dir = "";
const worker = await startWorker({
  materialize: (d) => void (dir = d),
  role: "workbench",
  sessionId: "s",
  generation: "g",
  command: [process.execPath, fileURLToPath(new URL("./requests.mjs", import.meta.url))],
  env: { FAKE_STAY: "1" },
});
const done = await worker.execute("spawn");
const pids = done.kind === "cell" ? (JSON.parse(done.output[0]!.text) as number[]) : [];
console.log(JSON.stringify({ pids: [worker.pid, ...pids], dir }));
process.exit(0);
