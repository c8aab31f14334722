import { createHash } from "node:crypto";
import { ActivationError } from "./errors.js";

/** One file of a source held in memory: its POSIX relative name and exact bytes. */
export interface DigestEntry {
  /** The UTF-8 bytes of the POSIX relative name (e.g. `pkg/mod.py`). */
  name: Uint8Array;
  /** The exact content bytes. */
  content: Uint8Array;
}

/** Order two names by their bytes (UTF-8 order), not by UTF-16 units as Array.prototype.sort would. */
export function compareNames(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** Write `value` (a safe integer) as an unsigned 64-bit big-endian number at `offset`. */
function writeU64(out: Buffer, value: number, offset: number): void {
  out.writeUInt32BE(Math.floor(value / 0x1_0000_0000), offset);
  out.writeUInt32BE(value >>> 0, offset + 4);
}

/**
 * The source digest of in-memory entries: entries sorted by name bytes, each fed to one SHA-256
 * as u64BE(name length), name, u64BE(content length), content; lowercase hex.
 */
export function digestEntries(entries: readonly DigestEntry[]): string {
  const sorted = [...entries].sort((a, b) => compareNames(a.name, b.name));
  const hash = createHash("sha256");
  for (let i = 0; i < sorted.length; i++) {
    const entry = sorted[i]!;
    if (i > 0 && compareNames(sorted[i - 1]!.name, entry.name) === 0) {
      const shown = Buffer.from(entry.name).toString("utf8");
      throw new ActivationError("SOURCE_DUPLICATE_NAME", `source name ${JSON.stringify(shown)} appears twice`, {
        path: shown,
      });
    }
    // One update for the framing and the name, one for the content: fewer crossings into the hash.
    const head = Buffer.allocUnsafe(16 + entry.name.byteLength);
    writeU64(head, entry.name.byteLength, 0);
    head.set(entry.name, 8);
    writeU64(head, entry.content.byteLength, 8 + entry.name.byteLength);
    hash.update(head);
    hash.update(entry.content);
  }
  return hash.digest("hex");
}
