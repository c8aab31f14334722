// The browser code of the web view: built by apps/web to static files, found here at run time.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { hostPackageRoot } from "../paths";

/** The built front end's files, served under /assets/ (nothing else from the directory is). */
export const ASSET_FILES: Readonly<Record<string, string>> = { "app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8" };

/**
 * Where the built front end is: KLBR_WEB_ASSETS when set; in a checkout of the repository its
 * apps/web/dist (what `pnpm build` makes); otherwise the copy staged into this package when it was
 * packed (web-assets/, as python/ is).
 */
export function webAssetsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KLBR_WEB_ASSETS) return resolve(env.KLBR_WEB_ASSETS);
  const root = hostPackageRoot();
  const repo = resolve(root, "..", "..");
  if (existsSync(join(repo, "pnpm-workspace.yaml")) && existsSync(join(repo, "apps", "web", "package.json"))) return join(repo, "apps", "web", "dist");
  return join(root, "web-assets");
}

/** The asset files read once (they do not change while a server runs); a missing build is said plainly. */
export function loadAssets(dir: string): Map<string, { type: string; body: Buffer }> {
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const [name, type] of Object.entries(ASSET_FILES)) {
    const path = join(dir, name);
    if (!existsSync(path)) throw new Error(`the web view's ${name} is missing from ${dir}: build it with \`pnpm -C apps/web build\` (or set KLBR_WEB_ASSETS)`);
    files.set(name, { type, body: readFileSync(path) });
  }
  return files;
}

/**
 * The page: a static shell with the first view's data inline, so a page is one request and its
 * load event comes after it rendered. JSON in a non-executed script element: `<` is escaped so no
 * text in it (a cell's output, a model's reply) can close the element.
 */
export function pageShell(title: string, data: unknown): string {
  const json = JSON.stringify(data).replace(/</g, "\\u003c");
  const safeTitle = title.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${safeTitle}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<div id="app"></div>
<script id="klbr-data" type="application/json">${json}</script>
<script src="/assets/app.js"></script>
</body>
</html>
`;
}
