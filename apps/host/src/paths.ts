import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import envPaths from "env-paths";

/** The @klbr/host package root, found by walking up from this module (works from src/ and from the dist bundle). */
export function hostPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const name = (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name;
      if (name === "@klbr/host") return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot locate the @klbr/host package root");
    dir = parent;
  }
}

/** Where the durable log, the releases, the managed skills and the control socket live. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.KLBR_DATA_DIR;
  if (fromEnv) return resolve(fromEnv);
  return envPaths("klbr", { suffix: "" }).data;
}

/**
 * The directory holding the Python worker runtime (`klbr`) and the default behaviour source
 * (`klbr_hooks`): KLBR_PYTHON_PATH when set; in a checkout of the repository, its `python/` (the
 * source of truth while developing); otherwise the copy shipped inside this package (`python/`,
 * staged when the package is packed).
 */
export function defaultPythonDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KLBR_PYTHON_PATH) return resolve(env.KLBR_PYTHON_PATH);
  const root = hostPackageRoot();
  const repo = resolve(root, "..", "..");
  if (existsSync(join(repo, "pnpm-workspace.yaml")) && existsSync(join(repo, "python", "klbr", "__init__.py"))) return join(repo, "python");
  return join(root, "python");
}

/** The files a host keeps inside its data directory. */
export interface DataLayout {
  dataDir: string;
  database: string;
  releases: string;
  managedSkills: string;
  controlSocket: string;
  /** Model routes (C10): `{"default", "routes": [...]}`; keys live in the environment, never here. */
  routes: string;
  /** Held by the one host (daemon or embedded) using the directory; it holds its pid. */
  lock: string;
}

/** Derive the data directory layout; `database` puts the log elsewhere (a SQLite file several hosts share, C21). */
export function dataLayout(dataDir: string, database?: string): DataLayout {
  return {
    dataDir,
    database: database ?? join(dataDir, "klbr.sqlite"),
    releases: join(dataDir, "releases"),
    managedSkills: join(dataDir, "skills"),
    controlSocket: join(dataDir, "klbr.sock"),
    routes: join(dataDir, "routes.json"),
    lock: join(dataDir, "klbr.lock"),
  };
}
