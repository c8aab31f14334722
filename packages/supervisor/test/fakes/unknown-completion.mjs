// On execute, completes an operation id the host never sent.
import { frame, envelope, hello, open, send, cellOk } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind === "execute") send(socket, { kind: "completed", id: "never-sent", result: cellOk() });
});
socket.write(frame(envelope(hello())));
