// Sends C20 display messages for each execute, as FAKE_DISPLAY says (each bad mode is a hostile
// worker the host must refuse by invalidating the generation):
//   good (default): a PNG and a text display, then the completion with displays_dropped 0;
//   all: 32 displays, then displays_dropped 968;  bad-base64 / wrong-mime / no-plain / upper-mime:
//   a bundle that breaks C20;  over-cap: a 5 MiB PNG in one frame;  seq-33: a 33rd display;
//   out-of-order, after-completed, unknown-operation;  dropped-early: displays_dropped 1 after one
//   display;  no-dropped: a completion without displays_dropped;  for-hooks: a display to a hooks host.
import { cellOk, envelope, frame, hello, open, send } from "./lib.mjs";
const mode = process.env.FAKE_DISPLAY ?? "good";
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(16, 1)]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
const show = (id, seq, data = { "text/plain": `display ${seq}` }, metadata = {}) => ({ kind: "display", id, seq, data, metadata });
const image = (bytes, mime = "image/png") => ({ "text/plain": "<Figure size 640x480 with 1 Axes>", [mime]: bytes.toString("base64") });
const done = (id, dropped = 0) => ({ kind: "completed", id, result: { ...cellOk(), ...(dropped === null ? {} : { displays_dropped: dropped }) } });
const socket = open((message) => {
  if (message.kind !== "execute" && message.kind !== "invoke") return;
  const id = message.id;
  switch (mode) {
    case "all":
      for (let seq = 0; seq < 32; seq++) send(socket, show(id, seq));
      send(socket, done(id, 968));
      return;
    case "bad-base64":
      send(socket, show(id, 0, { "text/plain": "x", "image/png": "iVBORw0KGgo!!!!" }));
      break;
    case "wrong-mime":
      send(socket, show(id, 0, image(JPEG, "image/png")));
      break;
    case "no-plain":
      send(socket, show(id, 0, { "image/png": PNG.toString("base64") }));
      break;
    case "upper-mime":
      send(socket, show(id, 0, { "text/plain": "x", "IMAGE/PNG": PNG.toString("base64") }));
      break;
    case "over-cap": {
      const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024, 3)]);
      socket.write(frame(envelope(show(id, 0, image(big)))));
      break;
    }
    case "seq-33":
      for (let seq = 0; seq < 33; seq++) send(socket, show(id, seq));
      break;
    case "out-of-order":
      send(socket, show(id, 0));
      send(socket, show(id, 2));
      break;
    case "after-completed":
      send(socket, done(id));
      send(socket, show(id, 0));
      return;
    case "unknown-operation":
      send(socket, show(`${id}-other`, 0));
      break;
    case "dropped-early":
      send(socket, show(id, 0));
      send(socket, done(id, 1));
      return;
    case "no-dropped":
      send(socket, done(id, null));
      return;
    case "for-hooks":
      send(socket, show(id, 0));
      break;
    default:
      send(socket, show(id, 0, image(PNG), { "image/png": { width: 640, height: 480 } }));
      send(socket, show(id, 1, { "text/plain": "| a |", "text/markdown": "| a |\n|---|" }));
  }
  if (message.kind === "invoke") send(socket, { kind: "completed", id, result: { kind: "hook", value: { action: "allow" } } });
  else send(socket, done(id));
});
socket.write(frame(envelope(hello())));
