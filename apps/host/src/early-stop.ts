/**
 * `klbr serve`'s stop signals, taken from the binary's first statement: a SIGINT or SIGTERM that
 * arrives while the daemon is still loading, taking its lock, recovering or starting workers is
 * recorded here instead of killing the process, and the serve command stops cleanly once the start
 * it is in has finished (exit 0, workers stopped, log closed). Its own small entry point, so the
 * binary arms it before it loads the rest of the CLI.
 */

/** The stop a daemon was asked for, from its first moment. */
export interface StopLatch {
  /** The first stop signal received, or null. */
  readonly signal: NodeJS.Signals | null;
  /** Resolves with the first stop signal (at once when it already came). */
  wait(): Promise<NodeJS.Signals>;
}

interface LatchState {
  signal: NodeJS.Signals | null;
  waiters: Array<(signal: NodeJS.Signals) => void>;
}

// On globalThis: the binary's copy of this module and the CLI bundle's must share one latch.
const KEY = Symbol.for("klbr.serve.stop-latch");
const STOP_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

/** Global options that take a value (`-d DIR`), to find the command word after them. */
const VALUED = new Set(["-d", "--data-dir", "-w", "--workspace"]);

/** The command word of a `klbr` argv (`node klbr.js [globals] COMMAND ...`), or undefined. */
export function commandWord(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return argv[i + 1];
    if (VALUED.has(arg)) {
      i++;
      continue;
    }
    if (!arg.startsWith("-")) return arg;
  }
  return undefined;
}

/**
 * The process's stop latch, installed on first use: from then on SIGINT and SIGTERM are recorded
 * (the first one wins, later ones are ignored: the clean stop is already under way).
 */
export function stopLatch(): StopLatch {
  const global = globalThis as { [KEY]?: LatchState };
  let state = global[KEY];
  if (!state) {
    const fresh: LatchState = { signal: null, waiters: [] };
    state = fresh;
    global[KEY] = fresh;
    for (const name of STOP_SIGNALS) {
      process.on(name, () => {
        if (fresh.signal !== null) return;
        fresh.signal = name;
        for (const resolve of fresh.waiters.splice(0)) resolve(name);
      });
    }
  }
  const latched = state;
  return {
    get signal() {
      return latched.signal;
    },
    wait: () => (latched.signal !== null ? Promise.resolve(latched.signal) : new Promise((resolve) => latched.waiters.push(resolve))),
  };
}

/** Arm the latch when `argv` runs `klbr serve` (the binary's first statement); other commands keep their own signal handling. */
export function armForServe(argv: readonly string[] = process.argv): void {
  if (commandWord(argv) === "serve") stopLatch();
}
