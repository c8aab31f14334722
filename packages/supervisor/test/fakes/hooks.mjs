// A scripted hooks worker: delivery.review texts steer it.
//   "allow" -> allow; "bad" -> an attention result for a delivery slot; "fail" -> failed;
//   "hang"  -> never answers; "slow:<ms>" -> allow after ms; anything else -> hold with the text.
import { frame, envelope, hello, open, send } from "./lib.mjs";
const socket = open((message) => {
  if (message.kind !== "invoke") return;
  const text = message.input.text ?? "";
  const done = (result) => send(socket, { kind: "completed", id: message.id, result });
  if (message.slot === "attention.plan") return done({ kind: "hook", value: { action: "wake", priority: 7 } });
  if (text === "allow") return done({ kind: "hook", value: { action: "allow" } });
  if (text === "bad") return done({ kind: "hook", value: { action: "wake", priority: 1 } });
  if (text === "fail") return done({ kind: "failed", error: "handler raised ValueError" });
  if (text === "hang") return;
  if (text.startsWith("slow:")) return setTimeout(() => done({ kind: "hook", value: { action: "allow" } }), Number(text.slice(5)));
  return done({ kind: "hook", value: { action: "hold", reason: text } });
});
socket.write(frame(envelope(hello())));
