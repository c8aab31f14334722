// On execute, completes it in an envelope of another generation.
import { frame, envelope, hello, open, cellOk } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind === "execute") {
    socket.write(frame(envelope({ kind: "completed", id: message.id, result: cellOk() }, { generation: "g-other" })));
  }
});
socket.write(frame(envelope(hello())));
