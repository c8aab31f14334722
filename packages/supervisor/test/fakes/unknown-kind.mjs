// On execute, answers with a message kind the protocol does not have.
import { frame, envelope, hello, open, send } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind === "execute") send(socket, { kind: "progress", id: message.id });
});
socket.write(frame(envelope(hello())));
