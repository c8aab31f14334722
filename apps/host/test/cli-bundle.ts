import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

/**
 * The klbr CLI bundled from source once per test run, as tsup bundles it for users, so each of
 * the hundreds of `klbr` processes the tests start loads a few files instead of compiling every
 * module through tsx (about 0.4 s a start instead of 1.3 s). Still from source: tests never need
 * dist/, and a stale build cannot be tested by mistake.
 */
const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));

/** Bundle test/run-cli.ts into a fresh temporary directory; returns the entry's path. */
export async function bundleCli(): Promise<{ entry: string; dispose: () => void }> {
  const outdir = mkdtempSync(join(tmpdir(), "klbr-cli-"));
  chmodSync(outdir, 0o755); // readable by the other users some tests run the CLI as
  await build({
    entryPoints: { "klbr-cli": join(HOST_DIR, "test", "run-cli.ts") },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: ["@klbr/source"],
    outExtension: { ".js": ".mjs" },
    logLevel: "warning",
    plugins: [externalDependencies(), sourceLocation()],
  });
  return { entry: join(outdir, "klbr-cli.mjs"), dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

/**
 * Workspace packages (@klbr/*, from their src/) are bundled; every other package stays external,
 * imported by the absolute path it resolves to here, so the bundle can live anywhere (a temporary
 * directory readable by the unprivileged sandbox run) and native modules load as installed.
 */
function externalDependencies(): Plugin {
  return {
    name: "klbr-external-dependencies",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.path.startsWith("@klbr/") || args.path.startsWith("node:") || args.pluginData === "resolving") return undefined;
        const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: "resolving" });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        return { path: resolved.external ? args.path : pathToFileURL(resolved.path).href, external: true };
      });
    },
  };
}

/**
 * Modules that find files beside themselves (the Python runtime, the guard script, migrations)
 * read `import.meta.url`: each keeps its own source file's URL instead of the bundle's.
 */
function sourceLocation(): Plugin {
  return {
    name: "klbr-source-location",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, "utf8");
        if (!text.includes("import.meta.url")) return undefined;
        return {
          contents: text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
          loader: "ts",
          resolveDir: dirname(args.path),
        };
      });
    },
  };
}
