// Sends C16 output messages for each execute, as FAKE_OUTPUT says:
//   good (default): seq 0 and 1, then the completion;  out-of-order: seq 0 then 2;
//   after-completed: the completion, then seq 0;  unknown-operation: an output for another id;
//   too-long: a text of 16,385 bytes (an envelope error);  for-hooks: output to a hooks host.
import { cellOk, envelope, frame, hello, open, send } from "./lib.mjs";
const mode = process.env.FAKE_OUTPUT ?? "good";
const output = (id, seq, text = `line ${seq}\n`) => ({ kind: "output", id, seq, stream: seq % 2 ? "stderr" : "stdout", text, dropped_bytes: seq });
const socket = open((message) => {
  if (message.kind !== "execute" && message.kind !== "invoke") return;
  const id = message.id;
  switch (mode) {
    case "out-of-order":
      send(socket, output(id, 0));
      send(socket, output(id, 2));
      break;
    case "after-completed":
      send(socket, { kind: "completed", id, result: cellOk() });
      send(socket, output(id, 0));
      return;
    case "unknown-operation":
      send(socket, output(`${id}-other`, 0));
      break;
    case "too-long":
      send(socket, output(id, 0, "x".repeat(16_385)));
      break;
    default:
      send(socket, output(id, 0));
      send(socket, output(id, 1));
  }
  send(socket, { kind: "completed", id, result: cellOk() });
});
socket.write(frame(envelope(hello())));
