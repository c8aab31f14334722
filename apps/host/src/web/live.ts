// Live output of a session's running cells for the page (C16, C23), as server-sent events from
// the daemon's live stream: a control connection per page, watching that session, closed with it.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DaemonLink } from "./daemon";

/** How long a page waits before it asks again when no daemon answered (EventSource's `retry`). */
const RETRY_MS = 2000;

/** Stream `sessionId`'s output, displays and cell/turn notifications until the page goes away. */
export async function streamSession(link: DaemonLink, sessionId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" });
  const send = (event: string, data: unknown) => {
    if (!res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  res.write(`retry: ${RETRY_MS}\n\n`);
  const client = await link.dedicated();
  if (!client) {
    send("daemon", { live: false, reason: "no daemon answers on the control socket" });
    res.end();
    return;
  }
  const close = () => client.close();
  req.on("close", close);
  res.on("close", close);
  client.listen((event) => {
    const e = event as { type?: string; session_id?: string };
    if (e.session_id !== sessionId) return;
    if (e.type === "output" || e.type === "display") send(e.type, e);
    else if (e.type === "execution" || e.type === "model" || e.type === "kernel.reset") send(e.type, e);
  });
  try {
    await client.request({ op: "subscribe" });
    const live = await client.watchOutput({ session: sessionId }, () => undefined);
    send("daemon", { live });
  } catch {
    send("daemon", { live: false, reason: "the daemon closed the control connection" });
    res.end();
    return;
  }
  // A comment now and then: a proxy or the browser never takes a quiet stream for a dead one.
  const beat = setInterval(() => !res.destroyed && res.write(": beat\n\n"), 15_000);
  beat.unref();
  void client.closed.then(() => {
    clearInterval(beat);
    if (!res.destroyed) res.end();
  });
}
