import { DriverError } from "./errors.js";
import type { Message } from "./messages.js";
import type { AssemblyInput, TranscriptRecord } from "./records.js";
import { cellImages, frameInput, renderCellResult, renderFrontier, renderRefusal, renderRevision, renderTurnEnd } from "./render.js";

/**
 * A request's messages as a pure function of the durable records: the pinned header, then the
 * frontier block (when the session has one), then each record after it in order. Inputs are
 * framed here, replies replayed as received, results framed from their rows, observations
 * rendered where they were noticed. A result whose reply the frontier covers has no call to
 * answer in this request, so it reads as a user message instead of a tool message.
 */
export function assembleMessages(input: AssemblyInput): Message[] {
  const messages: Message[] = [{ role: "system", text: input.header }];
  if (input.frontier) messages.push({ role: "user", text: renderFrontier(input.frontier) });
  const calls = new Set<string>();
  for (const record of input.records) messages.push(renderRecord(record, calls));
  return messages;
}

/** One record as one message; `calls` collects the call ids of replies seen so far in this request. */
export function renderRecord(record: TranscriptRecord, calls: Set<string>): Message {
  switch (record.kind) {
    case "input":
      return { role: "user", text: frameInput(record.event) };
    case "reply":
      for (const call of record.reply.calls) calls.add(call.id);
      return { role: "assistant", text: record.reply.text, calls: record.reply.calls };
    case "cell":
    case "refusal": {
      const text = record.kind === "cell" ? renderCellResult(record.result) : renderRefusal(record.reason, record.at_ms);
      const images = record.kind === "cell" ? cellImages(record.result) : [];
      const more = images.length > 0 ? { images } : {};
      return record.call_id !== null && calls.has(record.call_id) ? { role: "tool", call_id: record.call_id, text, ...more } : { role: "user", text, ...more };
    }
    case "observation":
      return { role: "user", text: renderRevision(record.revision) };
    case "turn_end":
      return { role: "user", text: renderTurnEnd(record.reason, record.at_ms) };
    default:
      throw new DriverError("DRIVER_INVALID_RECORD", `unknown transcript record kind ${JSON.stringify((record as { kind?: unknown }).kind)}`);
  }
}
