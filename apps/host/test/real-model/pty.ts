// A command in a pseudo-terminal (Python's stdlib pty, through pty_relay.py): keys typed go in as a
// terminal's input (Ctrl-C included), the screen's bytes come out.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const RELAY = fileURLToPath(new URL("./pty_relay.py", import.meta.url));

// CSI and OSC sequences, and the carriage returns and erases a spinner draws with.
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007|\u001b[()][A-Z0-9]|\r/g;

/** A running command in a terminal. */
export interface Terminal {
  /** Everything shown so far, escape sequences removed. */
  screen(): string;
  type(keys: string): void;
  /** Resolves when what is shown (from `from` on) matches. */
  waitFor(pattern: RegExp, from?: number, timeoutMs?: number): Promise<void>;
  /** The exit status (128+N after signal N). */
  readonly exit: Promise<number>;
  kill(): void;
}

export function startInTerminal(argv: string[], cwd: string): Terminal {
  const child = spawn(process.env.KLBR_PYTHON ?? "python3", [RELAY, "--", ...argv], { cwd, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, TERM: "xterm" } });
  let raw = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout.on("data", (c: Buffer) => {
    raw += c.toString("utf8");
    for (const l of listeners) l();
  });
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const exit = new Promise<number>((resolve) =>
    child.on("close", () => {
      const m = /EXIT (-?\d+)/.exec(stderr);
      for (const l of listeners) l();
      resolve(m ? Number(m[1]) : -1);
    }),
  );
  const screen = () => raw.replace(ANSI, "");
  return {
    screen,
    type: (keys) => void child.stdin.write(keys),
    waitFor: (pattern, from = 0, timeoutMs = 300_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(screen().slice(from))) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve();
          } else if (child.exitCode !== null) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`the command ended before ${pattern} showed:\n${screen().slice(-3000)}\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`${pattern} did not show within ${timeoutMs} ms:\n${screen().slice(-3000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
    exit,
    kill: () => void child.kill("SIGKILL"),
  };
}
