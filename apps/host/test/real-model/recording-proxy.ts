// A recording proxy on 127.0.0.1 in front of the real server: it keeps every request body exactly
// as klbr sent it and every reply exactly as the server sent it, and, to make the tool path run
// every time with a 135M model that often answers in text, adds `tool_choice` naming `python` to
// the first `forceToolCalls` chat requests on their way out (klbr itself never sends tool_choice).
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One exchange: what klbr sent (before any change), what the server got, and what it answered. */
export interface Exchange {
  path: string;
  /** The body exactly as klbr sent it. */
  sent: string;
  /** The body the server received (differs from `sent` only by an added tool_choice). */
  forwarded: string;
  status: number;
  /** The reply body exactly as the server sent it (SSE text for a streamed request). */
  reply: string;
  /** Whether tool_choice was added. */
  forced: boolean;
}

/** The running proxy. */
export interface RecordingProxy {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  readonly exchanges: Exchange[];
  /** Add tool_choice to the next `n` chat requests. */
  forceToolCalls(n: number): void;
  /**
   * Hold the next request before it reaches the server: `arrived` resolves when klbr has sent it,
   * `release` forwards it. A turn held this way is surely mid-request when the test acts on it.
   */
  holdNext(): { arrived: Promise<void>; release: () => void };
  /** Resolves when `count` exchanges have completed (an observable event, never a sleep). */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

const TOOL_CHOICE = { type: "function", function: { name: "python" } };

/** Start a proxy to `target` (`http://127.0.0.1:<port>`). */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const exchanges: Exchange[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const sockets = new Set<Socket>();
  let force = 0;
  let hold: { arrive: () => void; released: Promise<void> } | null = null;

  const settle = () => {
    for (const w of waiters.splice(0)) {
      if (exchanges.length >= w.count) w.resolve();
      else waiters.push(w);
    }
  };

  function forward(req: IncomingMessage, res: ServerResponse, sent: Buffer) {
    const path = req.url ?? "/";
    let forwarded = sent;
    let forced = false;
    if (force > 0 && req.method === "POST" && path.endsWith("/chat/completions")) {
      const body = JSON.parse(sent.toString("utf8")) as Record<string, unknown>;
      if (Array.isArray(body.tools)) {
        force -= 1;
        forced = true;
        forwarded = Buffer.from(JSON.stringify({ ...body, tool_choice: TOOL_CHOICE }), "utf8");
      }
    }
    const headers = { ...req.headers, host: upstream.host, "content-length": String(forwarded.length) };
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, path, method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      const reply: Buffer[] = [];
      up.on("data", (c: Buffer) => {
        reply.push(c);
        res.write(c);
      });
      up.on("end", () => {
        exchanges.push({ path, sent: sent.toString("utf8"), forwarded: forwarded.toString("utf8"), status: up.statusCode ?? 0, reply: Buffer.concat(reply).toString("utf8"), forced });
        res.end();
        settle();
      });
      up.on("error", () => res.destroy());
    });
    out.on("error", () => res.destroy());
    // klbr aborting a request (Ctrl-C) closes its socket: abort the upstream call with it.
    res.on("close", () => out.destroy());
    out.end(forwarded);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const held = hold;
      hold = null;
      if (!held) return forward(req, res, Buffer.concat(chunks));
      held.arrive();
      void held.released.then(() => (res.destroyed ? undefined : forward(req, res, Buffer.concat(chunks))));
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    exchanges,
    holdNext: () => {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((r) => (arrive = r));
      const released = new Promise<void>((r) => (release = r));
      hold = { arrive, released };
      return { arrived, release };
    },
    forceToolCalls: (n) => {
      force = n;
    },
    waitFor: (count) =>
      new Promise<void>((resolve) => {
        waiters.push({ count, resolve });
        settle();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The model a streamed chat reply named (its first chunk that names one), or null. */
export function reportedModel(reply: string): string | null {
  for (const line of reply.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    try {
      const chunk = JSON.parse(line.slice(6)) as { model?: unknown };
      if (typeof chunk.model === "string" && chunk.model !== "") return chunk.model;
    } catch {
      /* not a JSON chunk */
    }
  }
  return null;
}

/** The usage object a streamed chat reply carried, or null when no chunk had one (usage absent). */
export function reportedUsage(reply: string): Record<string, unknown> | null {
  let usage: Record<string, unknown> | null = null;
  for (const line of reply.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    try {
      const chunk = JSON.parse(line.slice(6)) as { usage?: unknown };
      if (chunk.usage && typeof chunk.usage === "object") usage = chunk.usage as Record<string, unknown>;
    } catch {
      /* not a JSON chunk */
    }
  }
  return usage;
}
