// A control message as one frame (C1: at most 1 MiB). What a reply or an event carries is not
// bounded by one frame: an exec reply lists each display's text (up to about 1 MiB each, C20), a
// log_page up to 200 records of 64 KiB outputs and 256 KiB cells. Such a message goes with its
// long strings cut (the durable log and the display blobs keep them whole), and one that still
// cannot fit is refused by code: an encoder error must never reach the socket's callback, where
// it would end the daemon.
import { encodeFrame, FrameError } from "@klbr/frame";
import type { ControlMessage } from "./protocol";

/** The marker a cut string ends with (the bytes it lost are counted). */
export const CUT_NOTE = "bytes cut to fit one control frame; the durable log keeps them";

/** The longest string kept whole in the first fitting attempt (characters); halved until it fits. */
const FIRST_BUDGET = 64 * 1024;
/** Below this a cut string says little more than its marker: give up and refuse. */
const LAST_BUDGET = 64;

function cutString(text: string, budget: number): string {
  if (text.length <= budget) return text;
  let end = budget;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // never split a surrogate pair
  const kept = text.slice(0, end);
  return `${kept}…[${Buffer.byteLength(text) - Buffer.byteLength(kept)} ${CUT_NOTE}]`;
}

/** A copy of `value` with every string longer than `budget` cut (object keys kept; `__proto__` stays a key). */
export function cutStrings(value: unknown, budget: number): unknown {
  if (typeof value === "string") return cutString(value, budget);
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, budget));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, budget)]));
  return value;
}

function tooLarge(error: unknown): boolean {
  return error instanceof FrameError && error.code === "FRAME_TOO_LARGE";
}

/**
 * The frame of `message`: as it is when it fits; else (a reply's value, an event) with its long
 * strings cut until it does. A blob's bytes (`base64`) are never cut: a blob that cannot travel
 * is refused with CONTROL_REPLY_TOO_LARGE, as is a message nothing makes fit. Errors other than
 * FRAME_TOO_LARGE (a value the wire cannot carry) become a refusal as well when the message is a
 * reply, and null (nothing sent) when it is an event.
 */
export function fitFrame(message: ControlMessage): Uint8Array | null {
  let failure: unknown;
  try {
    return encodeFrame(message);
  } catch (error) {
    failure = error;
  }
  const reply = "id" in message;
  const carried = "event" in message ? message.event : message.ok ? message.value : null;
  const blob = carried !== null && typeof carried === "object" && typeof (carried as { base64?: unknown }).base64 === "string";
  if (tooLarge(failure) && !blob && carried !== null) {
    for (let budget = FIRST_BUDGET; budget >= LAST_BUDGET; budget = Math.floor(budget / 2)) {
      const cut = cutStrings(carried, budget);
      try {
        return encodeFrame("event" in message ? { event: cut } : { ...message, value: cut });
      } catch (error) {
        if (!tooLarge(error)) break;
      }
    }
  }
  if (!reply) return null;
  const code = tooLarge(failure) ? "CONTROL_REPLY_TOO_LARGE" : "CONTROL_REPLY_UNENCODABLE";
  return encodeFrame({ id: (message as { id: number | null }).id, ok: false, error: { code, message: `the reply cannot be sent in one control frame: ${(failure as Error).message}` } });
}
