/** One server-sent event: its `event` field (null when it has none) and its `data` lines joined with "\n". */
export interface SseEvent {
  event: string | null;
  data: string;
}

/** Whether an error is the abort of the call (the operator's stop, the host's): the openai SDK's own test. */
export function isAbortError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}

/**
 * Read a streamed reply's server-sent events as they arrive, handing each to `onEvent` (which may
 * throw to stop reading; the body is then cancelled). The framing is the one the openai SDK's
 * reader applies: lines end in "\n", "\r\n" or "\r"; an empty line ends an event; a line starting
 * with ":" is a comment (llama.cpp's server sends `: ping` lines); `data` lines join with "\n";
 * `event` names the event; other fields are ignored; an event not ended by an empty line when the
 * body ends is dropped. Read here rather than through the SDK's stream: its four async-iterator
 * layers and per-chunk buffer copies cost more than the rest of a step's host work on a server
 * that streams one token per event. An aborted read ends quietly, as the SDK's stream does.
 */
export async function readSseEvents(body: ReadableStream<Uint8Array>, onEvent: (event: SseEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event: string | null = null;
  let data: string[] = [];

  const line = (text: string) => {
    if (text === "") {
      if (event !== null || data.length > 0) {
        const done = { event, data: data.join("\n") };
        event = null;
        data = [];
        onEvent(done);
      }
      return;
    }
    if (text.charCodeAt(0) === 58 /* ":" */) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* " " */) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  };

  const drain = (final: boolean) => {
    if (buffer.includes("\r")) {
      // A "\r" at the very end may be the first half of "\r\n": it waits for the next piece.
      const held = !final && buffer.endsWith("\r");
      buffer = (held ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, "\n") + (held ? "\r" : "");
    }
    let start = 0;
    for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n", start)) {
      line(buffer.slice(start, end));
      start = end + 1;
    }
    if (start > 0) buffer = buffer.slice(start);
  };

  try {
    for (;;) {
      let piece: Awaited<ReturnType<typeof reader.read>>;
      try {
        piece = await reader.read();
      } catch (error) {
        if (isAbortError(error)) return;
        throw error;
      }
      if (piece.done) break;
      buffer += decoder.decode(piece.value, { stream: true });
      drain(false);
    }
    buffer += decoder.decode();
    drain(true);
  } catch (error) {
    // Stop the transfer: nothing more of this body is read.
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
}
