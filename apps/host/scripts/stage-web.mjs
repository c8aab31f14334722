// Stages the web view's built front end (apps/web/dist: app.js, app.css) inside @klbr/host before
// it is packed (prepack), as web-assets/, where the installed host serves it from (C23; see
// src/web/assets.ts). postpack removes the copy.
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const host = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(host, "..", "web", "dist");
const to = join(host, "web-assets");

rmSync(to, { recursive: true, force: true });
if (process.argv[2] !== "--clean") {
  for (const file of ["app.js", "app.css"]) {
    if (!existsSync(join(from, file))) throw new Error(`no ${file} in ${from}: run \`pnpm build\` (turbo builds apps/web) before packing`);
  }
  mkdirSync(to, { recursive: true });
  for (const file of ["app.js", "app.css"]) cpSync(join(from, file), join(to, file));
}
