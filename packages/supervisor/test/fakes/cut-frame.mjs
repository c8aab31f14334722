// On execute, writes the first 10 bytes of a 100-byte frame, then closes and exits.
import { frame, envelope, hello, open } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind === "execute") {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(100);
    socket.end(Buffer.concat([head, Buffer.from('{"version"')]), () => process.exit(0));
  }
});
socket.write(frame(envelope(hello())));
