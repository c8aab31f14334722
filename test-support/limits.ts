// The Python that the C17 resource-limit tests run, in the supervisor's and the host's suites
// alike: one bomb per limit, so both suites meet the limit the same way.

/** Allocates 1 MiB at a time for ever: it ends only at the memory limit. */
export const MEMORY_BOMB = "b = []\nwhile True:\n    b.append(bytearray(1 << 20))";

/**
 * Forks children that sleep a minute, up to 10,000 of them. At the first refused fork it runs
 * `onRefusal` (with `e` the OSError, `n` the children so far, `refused` its errno); a loop never
 * refused prints `<n> no refusal`. `refused` is None until a fork is refused.
 */
export function forkBomb(onRefusal = "break"): string {
  return [
    "import os, time",
    "n, refused = 0, None",
    "for i in range(10000):",
    "    try:",
    "        pid = os.fork()",
    "    except OSError as e:",
    `        refused = e.errno; ${onRefusal}`,
    "    if pid == 0:",
    "        time.sleep(60); os._exit(0)",
    "    n += 1",
    "else:",
    "    print(n, 'no refusal', flush=True)",
  ].join("\n");
}

/** Spins in pure Python for ever: it ends only at the cpu limit. */
export const CPU_SPIN = "while True:\n    pass";
