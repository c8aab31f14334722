// Stages the Python runtime inside @klbr/host before it is packed (prepack): python/klbr (the
// worker) and python/klbr_hooks (the default behaviour source), from the repository's python/.
// Bytecode caches are not source: they are left out, and said so. postpack removes the copy.
import { cpSync, existsSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const host = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(host, "..", "..", "python");
const to = join(host, "python");

if (process.argv[2] === "--clean") {
  rmSync(to, { recursive: true, force: true });
} else {
  if (!existsSync(join(from, "klbr", "__init__.py"))) throw new Error(`no Python runtime at ${from}`);
  rmSync(to, { recursive: true, force: true });
  const skipped = [];
  for (const pkg of ["klbr", "klbr_hooks"]) {
    cpSync(join(from, pkg), join(to, pkg), {
      recursive: true,
      filter: (src) => {
        const cache = basename(src) === "__pycache__" || src.endsWith(".pyc");
        if (cache) skipped.push(src);
        return !cache;
      },
    });
  }
  cpSync(join(from, "README.md"), join(to, "README.md"));
  if (skipped.length > 0) process.stderr.write(`stage-python: left out ${skipped.length} bytecode cache entries\n`);
}
