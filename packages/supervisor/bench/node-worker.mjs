// The thinnest worker that speaks the protocol: hello, then answer every execute with "2".
// The bench runs it to show how much of a round trip is the host's own cost.
import { connect } from "node:net";

const flags = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) if (argv[i].startsWith("--")) flags[argv[i].slice(2)] = argv[i + 1];
const socket = connect(flags.socket);
const frame = (value) => {
  const body = Buffer.from(JSON.stringify(value));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
};
const envelope = (message) => ({ version: 1, session_id: flags.session, generation: flags.generation, message });
const result = { kind: "cell", status: "ok", output: [{ stream: "result", text: "2" }], truncated_bytes: 0, error: null };
let buf = Buffer.alloc(0);
socket.on("data", (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
    const n = buf.readUInt32BE(0);
    const { message } = JSON.parse(buf.subarray(4, 4 + n));
    buf = buf.subarray(4 + n);
    if (message.kind === "execute") socket.write(frame(envelope({ kind: "completed", id: message.id, result })));
    if (message.kind === "shutdown") process.exit(0);
  }
});
socket.on("close", () => process.exit(0));
socket.write(frame(envelope({ kind: "hello", token: process.env.KLBR_WORKER_TOKEN, role: "workbench", revision: null, slots: [], skills: null })));
