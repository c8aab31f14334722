// The release step (`pnpm version-packages`): after `changeset version` bumped the @klbr/* npm
// packages (one fixed group), give the Python package the same version, in pyproject.toml and
// klbr/_version.py. python/tests/test_version.py fails when any of them disagree.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { version } = JSON.parse(readFileSync(join(root, "apps/host/package.json"), "utf8"));

/** Replace the one match of `pattern` in `file`, or fail: a silent no-op would let the versions drift. */
function rewrite(file, pattern, replacement) {
  const path = join(root, file);
  const text = readFileSync(path, "utf8");
  const matches = text.match(new RegExp(pattern.source, "gm")) ?? [];
  if (matches.length !== 1) throw new Error(`${file}: expected one ${pattern} line, found ${matches.length}`);
  writeFileSync(path, text.replace(new RegExp(pattern.source, "m"), replacement));
}

rewrite("python/pyproject.toml", /^version = "[^"]*"$/, `version = "${version}"`);
rewrite("python/klbr/_version.py", /^__version__ = "[^"]*"$/, `__version__ = "${version}"`);
process.stdout.write(`python: klbr ${version}\n`);
