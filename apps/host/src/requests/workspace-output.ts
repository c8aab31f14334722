/** A byte-bounded sink: keeps the first `limit` bytes in all (shared budget), counts the rest. */
export class BoundedOutput {
  readonly chunks: Buffer[] = [];
  kept = 0;
  dropped = 0;
  constructor(private readonly budget: { left: number }) {}
  push(chunk: Buffer): void {
    const take = Math.min(chunk.length, this.budget.left);
    if (take > 0) {
      this.chunks.push(chunk.subarray(0, take));
      this.budget.left -= take;
      this.kept += take;
    }
    this.dropped += chunk.length - take;
  }
  /** The kept bytes as text, cut back to a character boundary; the cut bytes are counted. */
  text(): string {
    const buf = Buffer.concat(this.chunks);
    let end = buf.length;
    // Walk back over a trailing partial UTF-8 sequence so the reply never holds half a character.
    let lead = end - 1;
    while (lead >= 0 && end - lead <= 4 && (buf[lead]! & 0xc0) === 0x80) lead--;
    if (lead >= 0) {
      const b = buf[lead]!;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (end - lead < need) end = lead;
    }
    this.dropped += buf.length - end;
    return buf.subarray(0, end).toString("utf8");
  }
}

/** Room left in one frame (1,048,576 bytes) for the reply value once the envelope around it is counted. */
export const RUN_REPLY_BUDGET_BYTES = 1_000_000;

/** A workspace.run reply (C8). */
export interface RunReply {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  truncated_bytes: number;
  duration_ms: number;
  /** Set when a resource limit ended the command (C17): `memory_limit`, `cpu_limit`, `procs_limit`, `file_limit`. */
  limit?: string;
  limit_detail?: string;
}

const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/** Bytes UTF-16 unit `c` costs inside a JSON string as JSON.stringify writes it, in UTF-8 (a surrogate counts half its pair). */
function unitCost(c: number): number {
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x20) return SHORT_ESCAPES.has(c) ? 2 : 6;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) return 2;
  return 3;
}

/** Encoded bytes of `text` inside a JSON string (quotes not counted). */
export function encodedCost(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) n += unitCost(text.charCodeAt(i));
  return n;
}

/** The longest prefix of `text` whose encoded cost is at most `room`, never ending inside a surrogate pair. */
function prefixWithin(text: string, room: number): string {
  let n = 0;
  let i = 0;
  for (; i < text.length; i++) {
    const cost = unitCost(text.charCodeAt(i));
    if (n + cost > room) break;
    n += cost;
  }
  const last = text.charCodeAt(i - 1);
  if (i > 0 && i < text.length && last >= 0xd800 && last <= 0xdbff) i -= 1;
  return text.slice(0, i);
}

/**
 * Escaping can grow text six-fold (a control character becomes `\u0001`), so the byte budget alone
 * does not make the reply fit one frame. Cut the streams so the encoded reply is as large as fits
 * the budget: the smaller stream keeps up to half the room, the other the rest; what is cut is
 * counted (UTF-8 bytes) in `truncated_bytes`.
 */
export function fitReply(reply: RunReply, budget: number = RUN_REPLY_BUDGET_BYTES): RunReply {
  const out = reply.stdout;
  const err = reply.stderr;
  const outCost = encodedCost(out);
  const errCost = encodedCost(err);
  // Everything but the two texts, with room for truncated_bytes growing to its largest digits.
  const frame = Buffer.byteLength(JSON.stringify({ ...reply, stdout: "", stderr: "", truncated_bytes: Number.MAX_SAFE_INTEGER }));
  const room = Math.max(0, budget - frame);
  if (outCost + errCost <= room) return reply;
  const half = Math.floor(room / 2);
  const outShare = outCost <= errCost ? Math.min(outCost, half) : room - Math.min(errCost, half);
  const errShare = room - outShare;
  const stdout = prefixWithin(out, outShare);
  const stderr = prefixWithin(err, errShare);
  const cut = Buffer.byteLength(out) - Buffer.byteLength(stdout) + Buffer.byteLength(err) - Buffer.byteLength(stderr);
  return { ...reply, stdout, stderr, truncated_bytes: reply.truncated_bytes + cut };
}
