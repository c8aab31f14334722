// On execute, announces a 0xFFFFFFFF-byte frame. With FAKE_COMPLETE_FIRST, the cell's ok
// completion goes first, in the same write.
import { cellOk, frame, envelope, hello, open } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind !== "execute") return;
  const bad = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7b]);
  const first = process.env.FAKE_COMPLETE_FIRST ? frame(envelope({ kind: "completed", id: message.id, result: cellOk("first") })) : Buffer.alloc(0);
  socket.write(Buffer.concat([first, bad]));
});
socket.write(frame(envelope(hello())));
