import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, realpathSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import envPaths from "env-paths";

/**
 * Run by the interpreter the workers use (`-I -S`, so nothing of the environment or site changes
 * it): compiles every `klbr/**.py` under argv[1] and writes the sources and their bytecode into a
 * zip at argv[2], atomically (a temporary file in the same directory, then a rename). The bytecode
 * is hash-based and unchecked: the zip's name already says which runtime it was compiled from,
 * and its sources sit beside it for tracebacks. Each code object is compiled under its path inside
 * the zip, the path zipimport gives the module's `__file__`: the worker compares the two (a frame
 * of its own code is recognised by its file name).
 */
const COMPILE = `
import importlib.util, os, sys, tempfile, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc
src, target = sys.argv[1], sys.argv[2]
fd, tmp = tempfile.mkstemp(prefix=".klbr-", suffix=".tmp", dir=os.path.dirname(target))
try:
    with os.fdopen(fd, "wb") as out, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for dirpath, dirnames, filenames in os.walk(os.path.join(src, "klbr")):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(f for f in filenames if f.endswith(".py")):
                rel = os.path.relpath(os.path.join(dirpath, name), src)
                with open(os.path.join(dirpath, name), "rb") as f:
                    source = f.read()
                code = compile(source, os.path.join(target, rel), "exec", dont_inherit=True)
                z.writestr(rel, source)
                z.writestr(rel + "c", bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), False)))
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
except BaseException:
    os.unlink(tmp)
    raise
`;

/** Where the bytecode zips live by default: the user's cache directory (KLBR_BYTECODE_CACHE overrides it; "off" turns it off). */
export function defaultBytecodeDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const fromEnv = env.KLBR_BYTECODE_CACHE;
  if (fromEnv === "off") return null;
  return fromEnv || join(envPaths("klbr", { suffix: "" }).cache, "bytecode");
}

/**
 * A zip nobody touched for this long is deleted at a host's start: every host touches the zip it
 * uses when it starts, as it starts workers (at most hourly) and daily while it runs, since its
 * live workers import from the zip lazily. Other hosts of the same user may use other zips.
 */
export const BYTECODE_STALE_MS = 7 * 24 * 3600 * 1000;
/** How often a running host touches its zip at most (on worker starts) and at least (a timer). */
const TOUCH_EVERY_MS = 3600 * 1000;
const KEEP_ALIVE_MS = 24 * 3600 * 1000;
/** The files this cache writes: its zips, and the temporary file of a build (left by a crash). */
const ZIP_NAME = /^klbr-[0-9a-f]{32}\.zip$/;
const TEMP_NAME = /^\.klbr-.*\.tmp$/;

/** What the bytecode cache needs: the interpreter, the runtime, the directory it owns, and where a failure goes. */
export interface BytecodeOptions {
  python: string;
  pythonDir: string;
  /** The cache directory (null: off, every worker compiles klbr's modules as it imports them). */
  dir: string | null;
  /** A build failed (the directory cannot be written...): workers go on without it. */
  onError(error: Error): void;
}

/**
 * klbr's own Python modules, compiled once per runtime version and interpreter (issue 23).
 *
 * Workers run with `-B`: nothing they import writes bytecode (a cell's modules included), and the
 * runtime may be mounted read-only. Without bytecode each worker compiled klbr's modules at every
 * start (~60-100 ms CPU). The host compiles them instead, into a zip in a directory it owns, named
 * by a key of the runtime's fingerprint and the interpreter (its real path, size and mtime), and
 * workers put that zip first on their path (zipimport reads the bytecode; `-B` stays for everything
 * else). A runtime that changed has a new fingerprint, so a new key: the old zip is never used for
 * it, and until the new one is built (in the background, once) workers start from the sources as
 * before. A directory that cannot be written costs the same: workers start from the sources.
 */
export class RuntimeBytecode {
  private readonly building = new Map<string, Promise<void>>();
  /** Zips whose build failed: not tried again while the host runs. */
  private readonly failed = new Set<string>();
  private interpreter: string | null = null;
  /** Builds started so far (a test counts them). */
  builds = 0;
  private touchedAt = 0;
  private keepAlive: NodeJS.Timeout | null = null;

  constructor(private readonly opts: BytecodeOptions) {}

  /** The zip of the runtime with `fingerprint` when it is built; else null, and its build starts. */
  current(fingerprint: string): string | null {
    const path = this.pathOf(fingerprint);
    if (path === null) return null;
    if (existsSync(path)) {
      if (Date.now() - this.touchedAt >= TOUCH_EVERY_MS) this.touch(path);
      return path;
    }
    void this.build(path);
    return null;
  }

  /** Build the zip of `fingerprint` unless it is there; resolves when it is (or the build failed). */
  async prepare(fingerprint: string): Promise<string | null> {
    const path = this.pathOf(fingerprint);
    if (path === null) return null;
    if (!existsSync(path)) await this.build(path);
    if (!existsSync(path)) return null;
    this.touch(path);
    this.sweep(path);
    if (this.keepAlive === null) {
      // Unref'd: it lives as long as the host process, and never keeps it alive.
      this.keepAlive = setInterval(() => this.touch(path), KEEP_ALIVE_MS);
      this.keepAlive.unref();
    }
    return path;
  }

  /** Mark `path` as in use now (its mtime): no sweep of another host deletes it. */
  private touch(path: string): void {
    this.touchedAt = Date.now();
    try {
      const now = new Date(this.touchedAt);
      utimesSync(path, now, now);
    } catch {
      // Not ours to touch (another user's directory): the sweep of that user is not ours either.
    }
  }

  /**
   * Delete this cache's zips that no host touched for {@link BYTECODE_STALE_MS}, except `keep`, and
   * build leftovers as old: the directory used to grow by one zip per runtime and interpreter.
   * Returns the names deleted. Only names this cache writes are looked at.
   */
  sweep(keep: string, now = Date.now()): string[] {
    const { dir } = this.opts;
    if (dir === null) return [];
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    const deleted: string[] = [];
    for (const name of names) {
      if (!ZIP_NAME.test(name) && !TEMP_NAME.test(name)) continue;
      const path = join(dir, name);
      if (path === keep) continue;
      try {
        if (now - statSync(path).mtimeMs < BYTECODE_STALE_MS) continue;
        unlinkSync(path);
        deleted.push(name);
      } catch {
        // gone meanwhile, or not ours to delete
      }
    }
    return deleted;
  }

  /** The zip's path for `fingerprint` (null when off or the interpreter cannot be looked at). */
  private pathOf(fingerprint: string): string | null {
    const { dir } = this.opts;
    if (dir === null) return null;
    const interpreter = this.identifyInterpreter();
    if (interpreter === null) return null;
    const key = createHash("sha256").update(`${fingerprint}\0${interpreter}`).digest("hex").slice(0, 32);
    const path = join(dir, `klbr-${key}.zip`);
    return this.failed.has(path) ? null : path;
  }

  /** The interpreter's real path, size and mtime: another build or version of it is another key. */
  private identifyInterpreter(): string | null {
    if (this.interpreter === null) {
      try {
        const real = realpathSync(this.opts.python);
        const st = statSync(real);
        this.interpreter = `${real}\0${st.size}\0${st.mtimeMs}`;
      } catch {
        return null;
      }
    }
    return this.interpreter;
  }

  private build(path: string): Promise<void> {
    let running = this.building.get(path);
    if (!running) {
      this.builds += 1;
      running = this.compile(path).finally(() => this.building.delete(path));
      this.building.set(path, running);
    }
    return running;
  }

  private async compile(path: string): Promise<void> {
    const { dir, python, pythonDir } = this.opts;
    try {
      mkdirSync(dir!, { recursive: true, mode: 0o755 });
      await new Promise<void>((resolve, reject) => {
        execFile(python, ["-I", "-S", "-B", "-c", COMPILE, pythonDir, path], { timeout: 120_000 }, (error, _stdout, stderr) =>
          error ? reject(new Error(`${error.message.split("\n")[0]}${stderr ? `: ${stderr.trim().split("\n").at(-1)}` : ""}`)) : resolve(),
        );
      });
    } catch (error) {
      this.failed.add(path);
      this.opts.onError(error as Error);
    }
  }
}
