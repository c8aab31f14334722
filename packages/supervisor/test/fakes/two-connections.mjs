// Opens a second connection right after the first, reports whether the host dropped it, then behaves.
import { connect } from "node:net";
import { frame, envelope, hello, open, send, cellOk, args, log } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind === "execute") send(socket, { kind: "completed", id: message.id, result: cellOk(message.code) });
});
const second = connect(args.socket);
second.on("close", () => {
  log("second-closed");
  socket.write(frame(envelope(hello())));
});
second.on("error", () => {});
