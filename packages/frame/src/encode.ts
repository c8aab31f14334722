import { Buffer } from "node:buffer";
import { HEADER_BYTES, MAX_DEPTH, MAX_FRAME_BYTES, MAX_SAFE_INTEGER } from "./constants";
import { FrameError } from "./errors";

const utf8 = new TextEncoder();

// The trail of keys / indexes from the top to the current node, formatted only for a message.
function where(trail: (string | number)[]): string {
  if (trail.length === 0) return "the top level";
  return trail.map((step) => (typeof step === "number" ? `[${step}]` : `.${step}`)).join("");
}

function refuse(trail: (string | number)[], what: string): FrameError {
  return new FrameError("FRAME_UNENCODABLE", `cannot encode ${what} at ${where(trail)}`);
}

function describe(value: unknown): string {
  if (typeof value === "object" && value !== null) {
    const proto: unknown = Object.getPrototypeOf(value);
    const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return `a non-plain object (${typeof name === "string" && name ? name : "unknown prototype"})`;
  }
  if (typeof value === "bigint") return `BigInt ${value}n`;
  if (typeof value === "symbol") return `symbol ${String(value)}`;
  return typeof value === "function" ? "a function" : String(value);
}

function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

// Plain means made by a literal or JSON.parse, in this realm or another (vm, iframe): the
// prototype is Object.prototype / Array.prototype of some realm, or null for an object.
function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === null || proto === Object.prototype) return true;
  return Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(value) === "[object Object]";
}

function isPlainArray(value: object): boolean {
  const proto: object | null = Object.getPrototypeOf(value);
  if (proto === Array.prototype) return true;
  return proto !== null && Object.getPrototypeOf(Object.getPrototypeOf(proto)) === null;
}

// Walks depth first in property order and stops at the first problem, so nothing is written
// for a value that cannot be represented. `budget` bounds the walk of shared sub-trees: every
// visited node costs at least one payload byte.
interface Walk {
  ancestors: Set<object>;
  budget: number;
  trail: (string | number)[];
  /** A lower bound of the payload bytes: every UTF-16 unit of a string or key is >= 1 byte. */
  size: number;
}

function check(value: unknown, depth: number, walk: Walk): void {
  const path = walk.trail;
  if (--walk.budget < 0) {
    throw new FrameError("FRAME_TOO_LARGE", `value has more than ${MAX_FRAME_BYTES} nodes, so it cannot fit a frame`);
  }
  switch (typeof value) {
    case "string":
      if (!isWellFormed(value)) throw refuse(path, "a string with a lone surrogate");
      walk.size += value.length;
      return;
    case "number":
      if (!Number.isFinite(value)) throw refuse(path, `the non-finite number ${value}`);
      // JSON.stringify writes integral numbers below 1e21 as integer literals, which the
      // decoders refuse beyond 2^53 - 1; from 1e21 up it writes exponent form, a float literal.
      if (Number.isInteger(value) && Math.abs(value) > MAX_SAFE_INTEGER && Math.abs(value) < 1e21) {
        throw refuse(path, `the integer ${value}, beyond ±(2^53 - 1)`);
      }
      return;
    case "boolean":
      return;
    case "object": {
      if (value === null) return;
      const isArray = Array.isArray(value);
      if (!(isArray ? isPlainArray(value) : isPlainObject(value))) throw refuse(path, describe(value));
      if (walk.ancestors.has(value)) throw refuse(path, "a cycle");
      if (depth >= MAX_DEPTH) {
        throw new FrameError("FRAME_TOO_DEEP", `nesting deeper than ${MAX_DEPTH} at ${where(path)}`);
      }
      if (Object.getOwnPropertySymbols(value).length > 0) throw refuse(path, "an object with symbol keys");
      // JSON.stringify would write what toJSON returns; an enumerable one on an object is also
      // refused below as a function value, but one on an array or a hidden one is not walked.
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") throw refuse(path, "an object with a toJSON method");
      walk.ancestors.add(value);
      if (isArray) {
        const items = value as unknown[];
        for (let i = 0; i < items.length; i++) {
          path.push(i);
          check(items[i], depth + 1, walk);
          path.pop();
        }
      } else {
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) {
          path.push(key);
          if (!isWellFormed(key)) throw refuse(path, "a key with a lone surrogate");
          walk.size += key.length;
          check(record[key], depth + 1, walk);
          path.pop();
        }
      }
      walk.ancestors.delete(value);
      return;
    }
    default:
      throw refuse(path, describe(value));
  }
}

// Validated JSON text and its UTF-8 length; throws before anything is written.
function stringify(value: unknown): { text: string; length: number } {
  const walk: Walk = { ancestors: new Set(), budget: MAX_FRAME_BYTES, trail: [], size: 0 };
  check(value, 0, walk);
  // Refuse a value that cannot fit before serializing all of it.
  if (walk.size > MAX_FRAME_BYTES) {
    throw new FrameError("FRAME_TOO_LARGE", `payload of at least ${walk.size} bytes exceeds ${MAX_FRAME_BYTES} bytes`);
  }
  const text = JSON.stringify(value);
  // Stryker disable next-line StringLiteral: Buffer.byteLength reads an empty encoding name as its default, utf8
  const length = Buffer.byteLength(text, "utf8");
  if (length > MAX_FRAME_BYTES) {
    throw new FrameError("FRAME_TOO_LARGE", `payload of ${length} bytes exceeds ${MAX_FRAME_BYTES} bytes`);
  }
  return { text, length };
}

/**
 * Encodes a value as compact UTF-8 JSON. Refuses (before producing anything) what the wire
 * cannot carry exactly: FRAME_UNENCODABLE, FRAME_TOO_DEEP (over 128 levels), FRAME_TOO_LARGE.
 */
export function encodePayload(value: unknown): Uint8Array {
  const { text, length } = stringify(value);
  const out = new Uint8Array(length);
  utf8.encodeInto(text, out);
  return out;
}

/** Encodes a value as one whole frame: 4-byte big-endian payload length, then the payload. */
export function encodeFrame(value: unknown): Uint8Array {
  const { text, length } = stringify(value);
  const out = new Uint8Array(HEADER_BYTES + length);
  new DataView(out.buffer).setUint32(0, length, false);
  utf8.encodeInto(text, out.subarray(HEADER_BYTES));
  return out;
}
