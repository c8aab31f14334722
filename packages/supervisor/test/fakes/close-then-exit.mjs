// Connects, closes the connection without a hello, then exits with code 6 after 300 ms of
// "teardown" (with FAKE_STAY: never exits on its own).
import { connect } from "node:net";
import { args, log } from "./lib.mjs";
const socket = connect(args.socket, () => {
  socket.end();
  if (!process.env.FAKE_STAY) setTimeout(() => process.exit(6), 300);
});
socket.on("error", () => log("socket error"));
log("closed without hello");
