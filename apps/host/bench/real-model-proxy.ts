// The real-model bench's recording proxy, in a process of its own: the bench reads the host's
// main-thread busy time as host work, so the proxy's own parsing and forwarding must not run on
// that thread. Started by real-model.bench.ts: `real-model-proxy.ts <target> <forced tool calls>`;
// prints its base URL on one line, and stops when its stdin closes (the bench ending or dying).
import { startRecordingProxy } from "../test/real-model/recording-proxy";

const [target, forced] = process.argv.slice(2);
if (!target || !forced) {
  process.stderr.write("usage: real-model-proxy.ts <target http://127.0.0.1:port> <forced tool calls>\n");
  process.exit(2);
}
const proxy = await startRecordingProxy(target);
proxy.forceToolCalls(Number(forced));
process.stdout.write(`${proxy.baseUrl}\n`);
process.stdin.resume();
process.stdin.on("end", () => void proxy.close().then(() => process.exit(0)));
