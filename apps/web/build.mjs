// Builds the web view's browser code with esbuild (the monorepo's bundler, under tsup elsewhere):
// src/main.ts -> dist/app.js (one IIFE, no imports at run time, no CDN) and public/app.css ->
// dist/app.css. `node build.mjs [OUTDIR]`; tests build into a directory of their own.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));

/** Build the front end into `outdir` (default dist/). */
export async function buildWeb(outdir = join(here, "dist")) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const { metafile } = await build({
    entryPoints: [join(here, "src", "main.ts")],
    outfile: join(outdir, "app.js"),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
    metafile: true,
  });
  // The host's shapes come in by `import type` only (src/types.ts), which esbuild erases: a file
  // of the bundle from outside src/ means host (or package) code would run in the browser.
  const outside = Object.keys(metafile.inputs).filter((f) => !resolve(f).startsWith(join(here, "src") + "/"));
  if (outside.length > 0) throw new Error(`apps/web's bundle would hold code from outside apps/web/src: ${outside.join(", ")}`);
  copyFileSync(join(here, "public", "app.css"), join(outdir, "app.css"));
  return outdir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildWeb(process.argv[2] ? resolve(process.argv[2]) : undefined);
  process.stdout.write(`built the web view into ${out}\n`);
}
