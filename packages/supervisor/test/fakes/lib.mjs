// Shared plumbing of the fake workers: argv, raw framing, a tolerant reader. Deliberately
// independent of @klbr/frame so a fake can write bytes the real codec would refuse.
import { connect } from "node:net";

/** The flags the supervisor appends, as an object. */
export function flags() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--")) out[argv[i].slice(2)] = argv[i + 1];
  }
  return out;
}

export const args = flags();

/** Frame a JS value (or a raw JSON text) with its 4-byte big-endian length. */
export function frame(valueOrText) {
  const body = Buffer.from(typeof valueOrText === "string" ? valueOrText : JSON.stringify(valueOrText), "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

/** Wrap a message in this worker's envelope. */
export function envelope(message, overrides = {}) {
  return { version: 1, session_id: args.session, generation: args.generation, message, ...overrides };
}

/** A hello with the token from the environment unless overridden. */
export function hello(overrides = {}) {
  const hooks = args.role === "hooks";
  return {
    kind: "hello",
    token: process.env.KLBR_WORKER_TOKEN,
    role: args.role,
    revision: hooks ? "a".repeat(64) : null,
    slots: hooks ? ["attention.plan", "delivery.review"] : [],
    skills: null,
    ...overrides,
  };
}

/** Connect to the supervisor's socket; `onMessage(message)` gets each decoded inbound message. */
export function open(onMessage = () => {}) {
  const socket = connect(args.socket);
  let buf = Buffer.alloc(0);
  socket.on("data", (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 4) {
      const n = buf.readUInt32BE(0);
      if (buf.length < 4 + n) break;
      const value = JSON.parse(buf.subarray(4, 4 + n).toString("utf8"));
      buf = buf.subarray(4 + n);
      log(`recv ${value.message.kind} ${value.message.id ?? ""}`);
      if (value.message.kind === "shutdown" && !process.env.FAKE_IGNORE_SHUTDOWN && !process.env.FAKE_GRACEFUL) process.exit(0);
      onMessage(value.message, socket);
    }
  });
  // FAKE_STAY: outlive the connection, so only the host's kill can end this process.
  const gone = () => process.env.FAKE_STAY || process.exit(0);
  socket.on("close", gone);
  socket.on("error", gone);
  return socket;
}

/** Send one enveloped message. */
export function send(socket, message) {
  socket.write(frame(envelope(message)));
}

/** A line on stderr: the supervisor keeps it in stderrTail, which tests read. */
export function log(line) {
  process.stderr.write(line + "\n");
}

/** A plain ok cell result. */
export function cellOk(text = "ok") {
  return { kind: "cell", status: "ok", output: [{ stream: "result", text }], truncated_bytes: 0, error: null };
}

log(`pid ${process.pid}`);

// Keep the process alive until the socket closes or the supervisor kills it.
setInterval(() => {}, 1 << 30);
