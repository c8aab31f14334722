// A host that starts a fake worker, prints its pid, and exits without stopping it: the
// supervisor's process 'exit' hook must take the worker's tree down with it, and the orphan that
// left the tree (found by the generation's tag).
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
const pids: number[] = [];
for (const code of ["spawn", "orphan"]) {
  const done = await worker.execute(code);
  if (done.kind === "cell") pids.push(...(JSON.parse(done.output[0]!.text) as number[]));
}
console.log(JSON.stringify({ pids: [worker.pid, ...pids], dir }));
process.exit(0);
