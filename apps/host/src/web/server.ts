// `klbr web` (C23): a local page over the durable log, served by the host from its own database.
// 127.0.0.1 by default; a token in the printed URL, then an HttpOnly cookie; every other request
// is 401. Read-only, except the interrupt of a running cell (the control socket's `interrupt`).
import { statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { UsagePrices } from "@klbr/usage";
import { isIdentifier } from "@klbr/envelope";
import { openLogViews, type PriceBook } from "../control/log-views";
import type { SessionViewsStore } from "../store/api";
import { readRoutes } from "../runtime/routes-file";
import { loadAssets, pageShell, webAssetsDir } from "./assets";
import { cookieName, cookieOf, headerToken, newToken, sameToken, setCookie } from "./auth";
import { DaemonLink, sessionStates } from "./daemon";
import { streamSession } from "./live";
import type { PageData, SessionData, SessionsData } from "./page-data";

/** Where and how to serve. */
export interface WebOptions {
  /** The log's views: the Store of the host beside it or of `klbr web` (PostgreSQL or SQLite), never closed here. */
  views?: SessionViewsStore;
  /** Else a SQLite log, opened read-only here (and closed with the server). */
  database?: string;
  /** routes.json, for the prices (read again when it changes). */
  routesFile: string;
  /** The daemon's control socket: states, live output, interrupt. */
  controlSocket: string;
  host?: string;
  /** 0: any free port. */
  port?: number;
  /** Default: KLBR_WEB_TOKEN, else a fresh random one. */
  token?: string;
  assetsDir?: string;
}

/** A running web view. */
export interface WebServer {
  /** The URL to open, with the token: what `klbr web` prints first. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  // Nothing but this server's own script and style; images from itself (displays) or data: URLs.
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
};

/** The prices of routes.json by route, re-read when the file changes. */
function priceBook(file: string): () => PriceBook {
  let stamp = "";
  let book: PriceBook = new Map();
  return () => {
    let next = "none";
    try {
      const st = statSync(file);
      next = `${st.mtimeMs}:${st.size}`;
    } catch {
      /* no routes.json: no prices */
    }
    if (next !== stamp) {
      stamp = next;
      try {
        book = new Map(readRoutes(file).routes.filter((r) => r.prices).map((r) => [r.name, r.prices as UsagePrices]));
      } catch {
        book = new Map();
      }
    }
    return book;
  };
}

const pageNumber = (v: string | null): number | undefined => (v !== null && /^\d{1,9}$/.test(v) ? Number(v) : undefined);

/** Start the web view. */
export async function startWebServer(options: WebOptions): Promise<WebServer> {
  const token = options.token ?? (process.env.KLBR_WEB_TOKEN || newToken());
  const assets = loadAssets(options.assetsDir ?? webAssetsDir());
  if (!options.views && options.database === undefined) throw new Error("startWebServer needs the log's views or a SQLite file");
  const owned = options.views ? null : openLogViews(options.database!);
  const views: SessionViewsStore = options.views ?? owned!;
  const prices = priceBook(options.routesFile);
  const link = new DaemonLink(options.controlSocket);
  let port = 0;

  const sessionData = async (id: string, url: URL): Promise<SessionData | null> => {
    const summary = await views.sessionSummary(id, prices());
    if (!summary) return null;
    const state = (await sessionStates(link))?.get(id) ?? null;
    return {
      session: { ...summary, state: state?.state ?? null, running: state?.running ?? null },
      daemon: state !== null,
      requests: await views.requestPage(id, prices(), { page: pageNumber(url.searchParams.get("requests")) }),
      cells: await views.cellPage(id, { page: pageNumber(url.searchParams.get("cells")) }),
      frontiers: await views.frontierList(id),
      prices: Object.fromEntries(prices()),
    };
  };
  const sessionsData = async (): Promise<SessionsData> => {
    const states = await sessionStates(link);
    const sessions = (await views.listSessions(prices())).map((s) => ({ ...s, state: states?.get(s.session_id)?.state ?? null }));
    return { sessions, daemon: states !== null, prices: Object.fromEntries(prices()) };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const name = cookieName(port);
    const offered = url.searchParams.get("token");
    // The printed URL answers by itself (a client without a cookie jar, curl or fetch, gets the
    // page, as Jupyter's ?token= does) and sets the cookie for what follows; the page drops the
    // token from the address bar. Only a read: a write never rides on a URL.
    const byUrl = offered !== null && (req.method === "GET" || req.method === "HEAD") && sameToken(offered, token);
    if (byUrl) res.setHeader("set-cookie", setCookie(name, token));
    const header = headerToken(req);
    const cookie = cookieOf(req, name);
    const authorized = byUrl || (header !== undefined && sameToken(header, token)) || (cookie !== undefined && sameToken(cookie, token));
    if (!authorized) return text(res, 401, "401 Unauthorized: open the URL `klbr web` printed (it carries the token)\n");
    if (byUrl) url.searchParams.delete("token");
    const path = url.pathname;
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    if (req.method === "POST") {
      if (parts[0] === "api" && parts[1] === "cells" && parts[3] === "interrupt" && parts.length === 4 && isIdentifier(parts[2]!)) return interrupt(req, res, parts[2]!);
      return text(res, 405, "405: the web view is read-only (except a cell's interrupt)\n");
    }
    if (req.method !== "GET" && req.method !== "HEAD") return text(res, 405, "405: method not allowed\n");
    if (parts[0] === "assets" && parts.length === 2) {
      const asset = assets.get(parts[1]!);
      if (!asset) return text(res, 404, "404: no such asset\n");
      res.writeHead(200, { ...SECURITY_HEADERS, "content-type": asset.type, "content-length": asset.body.length });
      res.end(req.method === "HEAD" ? undefined : asset.body);
      return;
    }
    if (path === "/") return html(res, "klbr sessions", { page: "sessions", ...(await sessionsData()) });
    if (parts[0] === "sessions" && parts.length === 2 && isIdentifier(parts[1]!)) {
      const data = await sessionData(parts[1]!, url);
      if (!data) return text(res, 404, `404: the log has no session ${parts[1]}\n`);
      return html(res, `klbr session ${parts[1]}`, { page: "session", ...data });
    }
    if (parts[0] !== "api") return text(res, 404, "404: not found\n");
    if (path === "/api/sessions") return json(res, await sessionsData());
    if (parts[1] === "sessions" && parts.length === 3 && isIdentifier(parts[2]!)) {
      const data = await sessionData(parts[2]!, url);
      return data ? json(res, data) : json(res, { error: { code: "WEB_NOT_FOUND", message: `no session ${parts[2]}` } }, 404);
    }
    if (parts[1] === "sessions" && parts[3] === "live" && parts.length === 4 && isIdentifier(parts[2]!)) return streamSession(link, parts[2]!, req, res);
    if (parts[1] === "requests" && parts.length === 3 && isIdentifier(parts[2]!)) {
      const view = await views.requestView(parts[2]!);
      return view ? json(res, view) : json(res, { error: { code: "WEB_NOT_FOUND", message: `no model request ${parts[2]}` } }, 404);
    }
    if (parts[1] === "images" && parts.length === 3) {
      const image = await views.displayImage(parts[2]!);
      if (!image) return text(res, 404, "404: no such image\n");
      // Content-addressed: the bytes of a digest never change.
      res.writeHead(200, { ...SECURITY_HEADERS, "content-type": image.media_type, "content-length": image.data.length, "cache-control": "private, max-age=31536000, immutable" });
      res.end(req.method === "HEAD" ? undefined : image.data);
      return;
    }
    if (parts[1] === "cells" && parts.length === 3 && isIdentifier(parts[2]!)) {
      const view = await views.cellView(parts[2]!);
      return view ? json(res, view) : json(res, { error: { code: "WEB_NOT_FOUND", message: `no cell ${parts[2]}` } }, 404);
    }
    return text(res, 404, "404: not found\n");
  };

  /**
   * The one write: interrupt a running cell through the daemon's control socket, the ladder
   * `klbr` uses. Only from this page: a custom header (a cross-site form cannot send one, and a
   * cross-site fetch with one needs a preflight this server never grants) and a same-origin Origin.
   */
  const interrupt = async (req: IncomingMessage, res: ServerResponse, executionId: string): Promise<void> => {
    const origin = req.headers.origin;
    if (req.headers["x-klbr-web"] !== "interrupt" || (origin !== undefined && origin !== `http://${req.headers.host}`)) {
      return json(res, { error: { code: "WEB_FORBIDDEN", message: "an interrupt comes from the page itself" } }, 403);
    }
    const client = await link.connect();
    if (!client) return json(res, { error: { code: "HOST_NOT_RUNNING", message: "no daemon answers on the control socket" } }, 503);
    try {
      return json(res, { ok: true, value: await client.request({ op: "interrupt", execution_id: executionId }) });
    } catch (error) {
      const e = error as Error & { code?: string };
      return json(res, { error: { code: e.code ?? "CONTROL_REQUEST_FAILED", message: e.message } }, 409);
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) text(res, 500, `500: ${error.message}\n`);
      else res.destroy();
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
    });
  } catch (error) {
    await owned?.close();
    throw error;
  }
  port = (server.address() as AddressInfo).port;
  const host = options.host ?? "127.0.0.1";
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/?token=${token}`,
    port,
    token,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await link.close();
      await owned?.close();
    },
  };
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8" });
  res.end(body);
}

function json(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(value));
}

function html(res: ServerResponse, title: string, data: PageData): void {
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8" });
  res.end(pageShell(title, data));
}
