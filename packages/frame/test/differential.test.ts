import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FrameDecoder, isFrameError } from "../src/index";
import { differentialCorpus } from "./support/corpus";

const ORACLE = fileURLToPath(new URL("../../../python/tests/tools/frame_oracle.py", import.meta.url));
const PYTHON = process.env.KLBR_PYTHON ?? "python3";

interface Result {
  values: unknown[];
  code: string | null;
}

function decodeTs(stream: Uint8Array): Result {
  const decoder = new FrameDecoder();
  let values: unknown[];
  try {
    values = decoder.push(stream);
  } catch (error) {
    if (!isFrameError(error)) throw error;
    return { values: error.values, code: error.code };
  }
  try {
    decoder.end();
  } catch (error) {
    if (!isFrameError(error)) throw error;
    return { values, code: error.code };
  }
  return { values, code: null };
}

function decodePython(streams: Uint8Array[]): Result[] {
  const input = JSON.stringify({ cases: streams.map((s) => Buffer.from(s).toString("hex")) });
  const run = spawnSync(PYTHON, ["-B", ORACLE], { input, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`${PYTHON} ${ORACLE} failed (${run.status}): ${run.stderr || run.error}`);
  return (JSON.parse(run.stdout) as { results: Result[] }).results;
}

describe("differential: TypeScript and Python decoders agree", () => {
  const streams = differentialCorpus(0x6b6c6272, 4000);
  const python = decodePython(streams);

  it("agrees on accept/reject, values and error code for 4,000 seeded streams", () => {
    expect(python).toHaveLength(streams.length);
    const disagreements: string[] = [];
    streams.forEach((stream, i) => {
      const ts = decodeTs(stream);
      const py = python[i]!;
      // JSON text compares numbers by value (-0 and 0, 1 and 1.0 are one wire value).
      if (ts.code !== py.code || JSON.stringify(ts.values) !== JSON.stringify(py.values)) {
        disagreements.push(`${Buffer.from(stream).toString("hex").slice(0, 200)}: ts=${JSON.stringify(ts).slice(0, 120)} py=${JSON.stringify(py).slice(0, 120)}`);
      }
    });
    expect(disagreements.slice(0, 10)).toEqual([]);
  });

  it("exercises acceptance and most error codes (so agreement means something)", () => {
    const codes = new Map<string, number>();
    for (const r of python) codes.set(r.code ?? "ok", (codes.get(r.code ?? "ok") ?? 0) + 1);
    for (const code of ["ok", "FRAME_INVALID_UTF8", "FRAME_BOM", "FRAME_TOO_DEEP", "FRAME_INVALID_JSON", "FRAME_LONE_SURROGATE", "FRAME_NON_FINITE", "FRAME_UNSAFE_INTEGER", "FRAME_DUPLICATE_KEY", "FRAME_TRUNCATED", "FRAME_TOO_LARGE"]) {
      expect(codes.get(code) ?? 0, code).toBeGreaterThanOrEqual(10);
    }
  });
});
