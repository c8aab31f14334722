import { frame, envelope, hello, open } from "./lib.mjs";
const socket = open();
socket.write(frame(envelope(hello({ token: "0".repeat(64) }))));
