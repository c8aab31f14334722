// Run klbr.digest (the Python implementation) over many roots in one interpreter.
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { REPO } from "./tree.js";

/** What either language says about one root: its digest and files, or its refusal. */
export type Verdict = { digest: string; files: { name: string; size: number }[] } | { code: string; path: string | null };

const SCRIPT = `
import json, sys
from klbr.digest import ActivationError, source_files
out = []
for root in json.load(sys.stdin):
    try:
        digest, files = source_files(root)
        out.append({"digest": digest, "files": files})
    except ActivationError as error:
        out.append({"code": error.code, "path": error.path})
json.dump(out, sys.stdout)
`;

/** The interpreter: KLBR_PYTHON or python3. */
export const PYTHON = process.env.KLBR_PYTHON || "python3";

/** Ask Python for the verdict on every root, in order (one process for the batch). */
export function pythonVerdicts(roots: string[]): Verdict[] {
  const out = execFileSync(PYTHON, ["-B", "-c", SCRIPT], {
    input: JSON.stringify(roots),
    env: { ...process.env, PYTHONPATH: path.join(REPO, "python"), PYTHONDONTWRITEBYTECODE: "1" },
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out.toString("utf8")) as Verdict[];
}
