// A scripted workbench. On execute with code:
//   "late"      -> request r1 and r2; complete once r1's reply arrives (r2 is answered late by the host)
//   "late-same-chunk" -> request r1; once its reply arrives, write request r2 and the completion in one write
//   "many:<n>"  -> n requests at once; complete after every reply, with the reply kinds as result
//   "stray"     -> a request for an unknown execution; complete with the reply it got
//   "yield"     -> runtime.wait, then (after the ok reply) another request; complete yielded after both replies
//   "yield-pipelined" -> runtime.wait and a second runtime.wait in one write (before any reply);
//                  complete yielded after both replies, with the reply kinds as result
//   "ladder:<n>" -> ignore the first n-1 rungs (1: complete on interrupt, 2: on SIGINT, 3: never)
//   "exit:<n>"  -> process.exit(n)
//   "reset"     -> stop reading, request r1, exit 300 ms later with the host's reply unread (the
//                  kernel then resets the host's end: ECONNRESET instead of a clean EOF)
//   "spawn"     -> start `sleep 1000` and a setsid `sleep 1000`, complete with their pids
//   "orphan"    -> start a setsid `sleep 1000` through a shell that exits at once (the sleep goes
//                  to init: out of this worker's tree and group), complete with its pid
//   "flood:<mb>" -> write mb MiB to raw stdout, then complete
//   anything else -> complete ok with the code echoed
// With FAKE_GRACEFUL set, `shutdown` completes the running cell as interrupted before exiting.
import { spawn } from "node:child_process";
import { frame, envelope, hello, open, send, cellOk } from "./lib.mjs";
const interrupted = (id) => ({ kind: "completed", id, result: { kind: "cell", status: "interrupted", output: [], truncated_bytes: 0, error: "KeyboardInterrupt" } });
process.on("SIGINT", () => {
  if (current?.code === "ladder:2") send(socket, interrupted(current.id));
});
let current;
const socket = open((message) => {
  if (message.kind === "execute") {
    current = { id: message.id, code: message.code, replies: [] };
    const code = message.code;
    if (code === "late") {
      send(socket, { kind: "host_request", id: "r1", execution_id: current.id, request: { method: "local.send", text: "now" } });
      send(socket, { kind: "host_request", id: "r2", execution_id: current.id, request: { method: "local.send", text: "later" } });
    } else if (code === "late-same-chunk") {
      send(socket, { kind: "host_request", id: "r1", execution_id: current.id, request: { method: "local.send", text: "now" } });
    } else if (code.startsWith("many:")) {
      current.expect = Number(code.slice(5));
      for (let i = 0; i < current.expect; i++) {
        send(socket, { kind: "host_request", id: `m${i}`, execution_id: current.id, request: { method: "runtime.inspect" } });
      }
    } else if (code === "stray") {
      send(socket, { kind: "host_request", id: "s1", execution_id: "ghost", request: { method: "runtime.inspect" } });
    } else if (code === "yield") {
      send(socket, { kind: "host_request", id: "w1", execution_id: current.id, request: { method: "runtime.wait", seconds: null, reason: "input" } });
    } else if (code === "yield-pipelined") {
      const w = (id) => frame(envelope({ kind: "host_request", id, execution_id: current.id, request: { method: "runtime.wait", seconds: null, reason: id } }));
      socket.write(Buffer.concat([w("p1"), w("p2")]));
    } else if (code.startsWith("ladder:")) {
      // waits for interrupt / SIGINT
    } else if (code === "reset") {
      socket.pause();
      socket._handle.readStop(); // pause() alone keeps reading into the stream's buffer
      send(socket, { kind: "host_request", id: "r1", execution_id: current.id, request: { method: "local.send", text: "unread" } });
      setTimeout(() => process.exit(5), 300);
    } else if (code.startsWith("exit:")) {
      process.exit(Number(code.slice(5)));
    } else if (code === "spawn") {
      const a = spawn("sleep", ["1000"], { stdio: "ignore" });
      const b = spawn("sleep", ["1000"], { stdio: "ignore", detached: true });
      send(socket, { kind: "completed", id: current.id, result: cellOk(JSON.stringify([a.pid, b.pid])) });
    } else if (code === "orphan") {
      const id = current.id;
      const sh = spawn("sh", ["-c", "setsid sleep 1000 >/dev/null 2>&1 & echo $!"], { stdio: ["ignore", "pipe", "ignore"] });
      let out = "";
      sh.stdout.on("data", (chunk) => (out += chunk));
      sh.once("close", () => send(socket, { kind: "completed", id, result: cellOk(JSON.stringify([Number(out.trim())])) }));
    } else if (code.startsWith("flood:")) {
      const chunk = Buffer.alloc(1 << 20, 120);
      let left = Number(code.slice(6));
      const id = current.id;
      const pump = () => {
        while (left > 0) {
          left -= 1;
          if (!process.stdout.write(chunk)) return process.stdout.once("drain", pump);
        }
        send(socket, { kind: "completed", id, result: cellOk("flooded") });
      };
      pump();
    } else {
      send(socket, { kind: "completed", id: current.id, result: cellOk(code) });
    }
  } else if (message.kind === "shutdown" && process.env.FAKE_GRACEFUL) {
    // FAKE_GRACEFUL: finish the running cell as interrupted, then leave (with FAKE_REQUEST_ON_SHUTDOWN,
    // after one last host request of that cell).
    if (current && process.env.FAKE_REQUEST_ON_SHUTDOWN) {
      send(socket, { kind: "host_request", id: "z1", execution_id: current.id, request: { method: "local.send", text: "bye" } });
    }
    if (current) send(socket, interrupted(current.id));
    socket.end(() => process.exit(0));
  } else if (message.kind === "interrupt") {
    if (current?.code === "ladder:1") send(socket, interrupted(current.id));
  } else if (message.kind === "host_reply") {
    const c = current;
    c.replies.push(message);
    const summary = () => JSON.stringify(c.replies.map((r) => (r.reply.kind === "ok" ? "ok" : r.reply.code)));
    if (c.code === "late" && message.id === "r1") send(socket, { kind: "completed", id: c.id, result: cellOk("done") });
    if (c.code === "late-same-chunk" && message.id === "r1") {
      const r2 = { kind: "host_request", id: "r2", execution_id: c.id, request: { method: "local.send", text: "later" } };
      socket.write(Buffer.concat([frame(envelope(r2)), frame(envelope({ kind: "completed", id: c.id, result: cellOk("done") }))]));
    }
    if (c.code.startsWith("many:") && c.replies.length === c.expect) send(socket, { kind: "completed", id: c.id, result: cellOk(summary()) });
    if (c.code === "stray") send(socket, { kind: "completed", id: c.id, result: cellOk(JSON.stringify(message)) });
    if (c.code === "yield-pipelined" && c.replies.length === 2) {
      send(socket, { kind: "completed", id: c.id, result: { kind: "cell", status: "yielded", output: [{ stream: "result", text: summary() }], truncated_bytes: 0, error: null } });
    }
    if (c.code === "yield" && message.id === "w1") {
      send(socket, { kind: "host_request", id: "w2", execution_id: c.id, request: { method: "local.send", text: "after" } });
    }
    if (c.code === "yield" && message.id === "w2") {
      send(socket, { kind: "completed", id: c.id, result: { kind: "cell", status: "yielded", output: [{ stream: "stdout", text: summary() }], truncated_bytes: 0, error: null } });
    }
  }
});
socket.write(frame(envelope(hello())));
