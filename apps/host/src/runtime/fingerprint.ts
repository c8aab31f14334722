import { createHash } from "node:crypto";
import { readdirSync, statSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";

/** One walk of the runtime: its fingerprint and the directories it went through. */
export interface RuntimeWalk {
  fingerprint: string;
  dirs: string[];
}

/**
 * A fingerprint of the Python runtime on disk (under `pythonDir/klbr`, every directory's path and
 * every `.py` file's path, size and mtime): a spare that imported an older runtime than the one a
 * cold start would run is not current.
 */
export function walkRuntime(pythonDir: string): RuntimeWalk {
  const hash = createHash("sha256");
  const dirs: string[] = [];
  const walk = (dir: string) => {
    dirs.push(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name === "__pycache__") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        hash.update(`${path}/\n`);
        walk(path);
      } else if (entry.name.endsWith(".py")) {
        const st = statSync(path);
        hash.update(`${path}\0${st.size}\0${st.mtimeMs}\n`);
      }
    }
  };
  walk(join(pythonDir, "klbr"));
  return { fingerprint: hash.digest("hex"), dirs };
}

/** The fingerprint alone (one walk). */
export function runtimeFingerprint(pythonDir: string): string {
  return walkRuntime(pythonDir).fingerprint;
}

/**
 * The runtime's fingerprint as of now, without a walk on the path that asks (a spare's take).
 *
 * Walked once when the host starts. The runtime is the host's own release (its package's
 * `python/`, or KLBR_PYTHON_PATH): nothing the host does writes there, so while the host runs it
 * changes only when someone edits a checkout or upgrades the install in place. Those are exactly
 * the changes a spare must not hide (a cold start would import the new files), so each directory
 * of the runtime is watched (inotify; two directories today) and the first read after a change
 * walks again. Where a directory cannot be watched (inotify exhausted, a file system without it),
 * every read walks, as before: slower, never stale.
 */
export class RuntimeFingerprint {
  private current: string | null = null;
  private watchers: FSWatcher[] = [];
  private watching = false;
  private closed = false;
  /** Walks done so far (a test counts them: a take must not add one). */
  walks = 0;

  constructor(
    private readonly pythonDir: string,
    private readonly walk: (pythonDir: string) => RuntimeWalk = walkRuntime,
  ) {}

  /** The fingerprint: the cached one while nothing in the runtime changed, else a new walk. */
  value(): string {
    if (this.current !== null && this.watching) return this.current;
    this.walks += 1;
    const { fingerprint, dirs } = this.walk(this.pythonDir);
    this.current = fingerprint;
    if (!this.closed) this.watch(dirs);
    return fingerprint;
  }

  /** Stop watching (the host stops). */
  close(): void {
    this.closed = true;
    this.unwatch();
  }

  private watch(dirs: string[]): void {
    this.unwatch();
    try {
      for (const dir of dirs) {
        const w = watch(dir, { persistent: false }, (_event, name) => {
          // Python's bytecode cache is not the runtime; anything else (an edit, a new file or
          // directory, a rename) is: the next read walks again and watches what is there then.
          if (name !== "__pycache__") this.invalidate();
        });
        w.on("error", () => this.invalidate());
        this.watchers.push(w);
      }
      this.watching = true;
    } catch {
      this.unwatch();
    }
  }

  private invalidate(): void {
    this.unwatch();
  }

  private unwatch(): void {
    this.watching = false;
    for (const w of this.watchers.splice(0)) w.close();
  }
}
