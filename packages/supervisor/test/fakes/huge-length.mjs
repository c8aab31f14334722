// On execute, announces a 0xFFFFFFFF-byte frame.
import { frame, envelope, hello, open } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind === "execute") socket.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7b]));
});
socket.write(frame(envelope(hello())));
