import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The repository's fixtures/frame directory. */
export const FRAME_FIXTURES = fileURLToPath(new URL("../../../../fixtures/frame/", import.meta.url));

/** One vector as written in fixtures/frame/*.json. */
export interface FrameCase {
  description: string;
  input: Record<string, unknown>;
  expected?: unknown;
  yielded?: unknown[];
  error?: { code: string };
}

/** One fixtures file. */
export interface FrameVectorFile {
  name: string;
  kind: "decode" | "encode";
  cases: FrameCase[];
}

/** Every fixtures/frame/*.json file; a malformed one fails the run. */
export function loadFrameVectors(): FrameVectorFile[] {
  const files = readdirSync(FRAME_FIXTURES).filter((f) => f.endsWith(".json")).sort();
  return files.map((name) => {
    const data = JSON.parse(readFileSync(FRAME_FIXTURES + name, "utf8")) as { kind: "decode" | "encode"; cases: FrameCase[] };
    if (!Array.isArray(data.cases) || data.cases.length === 0) throw new Error(`${name} holds no cases`);
    return { name, kind: data.kind, cases: data.cases };
  });
}

function hex(text: string): Uint8Array {
  if (!/^(?:[0-9a-f]{2})*$/.test(text)) throw new Error(`bad hex in fixture: ${text.slice(0, 20)}`);
  return Uint8Array.from(Buffer.from(text, "hex"));
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function part(spec: unknown): Uint8Array {
  if (typeof spec === "string") return hex(spec);
  const s = spec as { header?: number; repeat?: string; count?: number };
  if (typeof s.header === "number") {
    const out = new Uint8Array(4);
    new DataView(out.buffer).setUint32(0, s.header, false);
    return out;
  }
  if (typeof s.repeat === "string" && typeof s.count === "number") {
    const unit = hex(s.repeat);
    const out = new Uint8Array(unit.length * s.count);
    for (let i = 0; i < s.count; i++) out.set(unit, i * unit.length);
    return out;
  }
  throw new Error(`unknown part ${JSON.stringify(spec)}`);
}

/** The chunks a decode case pushes, in order. */
export function caseChunks(input: Record<string, unknown>): Uint8Array[] {
  if (typeof input.hex === "string") return [hex(input.hex)];
  if (Array.isArray(input.chunks)) return input.chunks.map((c) => hex(c as string));
  if (Array.isArray(input.parts)) {
    const bytes = concat(input.parts.map(part));
    const size = typeof input.chunk_size === "number" ? input.chunk_size : bytes.length || 1;
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
    return chunks;
  }
  throw new Error(`unknown input ${JSON.stringify(input).slice(0, 80)}`);
}

/** Concatenation of chunks. */
export { concat };

/** Replaces the fixture markers ($float, $repeat, $nest) by the values they stand for. */
export function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0]!.startsWith("$")) {
    const arg = record[keys[0]!];
    switch (keys[0]) {
      case "$float":
        return { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, "-Infinity": Number.NEGATIVE_INFINITY }[arg as string];
      case "$repeat": {
        const [unit, count] = arg as [string, number];
        return unit.repeat(count);
      }
      case "$nest": {
        const { depth, kind, leaf } = arg as { depth: number; kind: string; leaf: unknown };
        let out = revive(leaf);
        for (let i = 0; i < depth; i++) out = kind === "array" ? [out] : { k: out };
        return out;
      }
    }
    throw new Error(`unknown marker ${keys[0]}`);
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) Object.defineProperty(out, k, { value: revive(record[k]), enumerable: true, writable: true, configurable: true });
  return out;
}
