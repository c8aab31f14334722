import { createHash } from "node:crypto";

/** SHA-256 hex of a request body as sent (UTF-8). */
export function bodyDigest(body: string): string {
  const hash = createHash("sha256");
  // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
  hash.update(body, "utf8");
  return hash.digest("hex");
}

/** The serialized request body: exactly the bytes the route client sends. */
export function serializeBody(body: unknown): string {
  return JSON.stringify(body);
}

/** How many leading bytes two UTF-8 texts share. */
export function sharedPrefixBytes(a: string | Buffer | null, b: string | Buffer): number {
  if (a === null) return 0;
  // Buffer.from reads a string as UTF-8.
  const x = typeof a === "string" ? Buffer.from(a) : a;
  const y = typeof b === "string" ? Buffer.from(b) : b;
  const n = Math.min(x.length, y.length);
  // Compare in 8 KiB slices first: the common case is a long shared prefix.
  let i = 0;
  const step = 8192;
  while (i + step <= n && x.compare(y, i, i + step, i, i + step) === 0) i += step;
  while (i < n && x[i] === y[i]) i++;
  return i;
}

/**
 * The messages of a request as one text, one JSON line per message: the earlier request's text is
 * a byte-prefix of the later one's exactly when its messages are a prefix of the later messages
 * (C10 prefix stability).
 */
export function serializeMessages(messages: readonly unknown[]): string {
  return messages.map((m) => `${JSON.stringify(m)}\n`).join("");
}

/**
 * A request body as prefix stability reads it (C10 amended): an `anthropic` body without the
 * moving `cache_control` marker on its last message (the marker is where the cache ends, not part
 * of the prefix; the header's fixed marker stays). Other APIs mark nothing: the body itself.
 */
export function prefixView(api: string, body: Record<string, unknown>): Record<string, unknown> {
  if (api !== "anthropic" || !Array.isArray(body.messages) || body.messages.length === 0) return body;
  const messages = body.messages as Array<{ content?: unknown }>;
  const last = messages.at(-1)!;
  if (!Array.isArray(last.content) || last.content.length === 0) return body;
  const blocks = last.content as Array<Record<string, unknown>>;
  const { cache_control: _moving, ...unmarked } = blocks.at(-1)!;
  return { ...body, messages: [...messages.slice(0, -1), { ...last, content: [...blocks.slice(0, -1), unmarked] }] };
}
