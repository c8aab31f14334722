// On execute, completes it with a payload whose result object repeats a key.
import { frame, envelope, hello, open, args } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind === "execute") {
    const text = `{"version":1,"session_id":"${args.session}","generation":"${args.generation}","message":{"kind":"completed","id":"${message.id}","result":{"kind":"failed","error":"a","error":"b"}}}`;
    socket.write(frame(text));
  }
});
socket.write(frame(envelope(hello())));
