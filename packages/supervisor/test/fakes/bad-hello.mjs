// Says hello with fields taken from FAKE_HELLO (a JSON object of overrides).
import { frame, envelope, hello, open } from "./lib.mjs";
const socket = open();
socket.write(frame(envelope(hello(JSON.parse(process.env.FAKE_HELLO ?? "{}")))));
