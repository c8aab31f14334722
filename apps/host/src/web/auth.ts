// The web view's one secret (C23): a token in the URL `klbr web` prints, which sets an HttpOnly
// cookie, as Jupyter's does (or an `Authorization: token` header); without one every request is 401.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** A fresh token: 24 random bytes, hex. */
export function newToken(): string {
  return randomBytes(24).toString("hex");
}

/** Compare without leaking, through timing, how much of a guess was right. */
export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The cookie's name: per port, since browsers share cookies between the ports of one host. */
export function cookieName(port: number): string {
  return `klbr_web_${port}`;
}

/** The value of one cookie of a request, or undefined. */
export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The token of an `Authorization: token <T>` (Jupyter's) or `Bearer <T>` header, schemes case-insensitive; else undefined. */
export function headerToken(req: IncomingMessage): string | undefined {
  const m = /^(?:token|bearer)[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? "");
  return m ? m[1] : undefined;
}

/** The Set-Cookie header that keeps the token for the rest of the browser session. */
export function setCookie(name: string, token: string): string {
  return `${name}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}
