import { HostError } from "../errors";

/** Where `klbr web` listens by default: loopback only (C23). */
export const DEFAULT_WEB_LISTEN = { host: "127.0.0.1", port: 8765 } as const;

/** `--listen` / `--web`: `HOST:PORT`, `[IPv6]:PORT` or a bare `PORT` (on 127.0.0.1); port 0 takes any free one. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(\d{1,5})$/.exec(text) ?? /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/.exec(text) ?? /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const host = m && m.length === 3 ? m[1]! : DEFAULT_WEB_LISTEN.host;
  const port = m ? Number(m.at(-1)) : NaN;
  if (!m || port > 65535) throw new HostError("CLI_USAGE", `--listen needs HOST:PORT, [IPv6]:PORT or PORT (e.g. 127.0.0.1:8765), got ${JSON.stringify(text)}`);
  return { host, port };
}
