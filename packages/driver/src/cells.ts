import type { CellsMode } from "./routes.js";
import type { ModelReply } from "./records.js";

/** The spec's cell source limit, in UTF-8 bytes. */
export const MAX_CELL_SOURCE_BYTES = 262_144;

/** What one call of a reply asks for: a cell to run, or the reason the host will not run it. */
export type CellRequest = { call_id: string | null; code: string } | { call_id: string | null; refused: string };

const FENCE = /```(?:python|py|python3)[ \t]*\r?\n([\s\S]*?)```/;

/**
 * The cells a reply carries (C10): with `tool`, each call to `python` with a string `code`; with
 * `fence`, the first fenced python block. A call the host cannot run (another tool, arguments that
 * are not `{"code": string}`, a source over 262,144 bytes) is a refusal the model is told about.
 * No cell at all ends the turn.
 */
export function cellsOf(reply: ModelReply, mode: CellsMode): CellRequest[] {
  if (mode === "fence") {
    const match = FENCE.exec(reply.text);
    // Stryker disable next-line StringLiteral: group 1 takes part in every match of FENCE, so the fallback is never read
    return match ? [checkSize(null, match[1] ?? "")] : [];
  }
  return reply.calls.map((call) => {
    if (call.name !== "python") return { call_id: call.id, refused: `unknown tool ${JSON.stringify(call.name)}: the only tool is python(code)` };
    let args: unknown;
    try {
      args = JSON.parse(call.arguments === "" ? "{}" : call.arguments);
    } catch (error) {
      return { call_id: call.id, refused: `the arguments are not valid JSON (${(error as Error).message}); send {"code": "<python source>"}` };
    }
    // Only an object can carry a string `code`: a primitive, an array or null has none.
    const code = (args as { code?: unknown } | null)?.code;
    if (typeof code !== "string") {
      return { call_id: call.id, refused: 'the arguments must be a JSON object with one string field "code"' };
    }
    return checkSize(call.id, code);
  });
}

function checkSize(callId: string | null, code: string): CellRequest {
  // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
  const bytes = Buffer.byteLength(code, "utf8");
  if (bytes > MAX_CELL_SOURCE_BYTES) {
    return { call_id: callId, refused: `the cell source is ${bytes} bytes; the limit is ${MAX_CELL_SOURCE_BYTES} bytes. Split the work into smaller cells (write data to a file with one cell, use it from the next).` };
  }
  return { call_id: callId, code };
}
