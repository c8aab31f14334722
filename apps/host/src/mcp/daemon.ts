// The daemon `klbr mcp` talks to: the one already serving its data directory, or one it starts
// (a plain `klbr serve`, detached, that outlives this server so the workbenches' namespaces do too).
// If the daemon dies, the next call finds it gone and starts another: a call never waits on a
// dead connection.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { execa } from "execa";
import { ControlClient } from "../control/client";
import { HostError } from "../errors";
import { dataLayout } from "../paths";

/** How long a started daemon may take to answer on its socket (a cold start compiles the runtime's bytecode). */
const START_TIMEOUT_MS = 60_000;

/** Where a daemon started by `klbr mcp` writes its log, in its data directory. */
export function daemonLogFile(dataDir: string): string {
  return join(dataDir, "mcp-serve.log");
}

/** How to start `klbr serve` for a data directory: this very CLI, with the same globals. */
export interface DaemonCommand {
  dataDir: string;
  workspace?: string;
  /** argv of `klbr` up to (not including) the command word: node, its flags, the entry script. */
  klbr?: readonly string[];
}

/** One connection to the data directory's daemon at a time, made (and the daemon started) on demand. */
export class DaemonLink {
  private current: Promise<ControlClient> | null = null;
  private readonly socket: string;
  /** Said once per daemon this link started (to stderr by the caller). */
  onStarted?: (pid: number | undefined, log: string) => void;

  constructor(private readonly command: DaemonCommand) {
    this.socket = dataLayout(command.dataDir).controlSocket;
  }

  /** The live connection, or a new one (starting a daemon when none answers). */
  client(): Promise<ControlClient> {
    if (!this.current) {
      const made = this.connectOrStart();
      this.current = made;
      made.then(
        (client) => void client.closed.then(() => this.current === made && (this.current = null)),
        () => this.current === made && (this.current = null),
      );
    }
    return this.current;
  }

  /** Close the connection (the daemon keeps running). */
  async close(): Promise<void> {
    const current = this.current;
    this.current = null;
    if (current) (await current.catch(() => null))?.close();
  }

  private async connectOrStart(): Promise<ControlClient> {
    const existing = await this.tryConnect();
    if (existing) return existing;
    const child = this.start();
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const client = await this.tryConnect();
      if (client) return client;
      // Lost a race to another `klbr mcp` (HOST_ALREADY_RUNNING): its daemon answers soon, keep polling.
      if (child.exited && child.code !== 0 && !/HOST_ALREADY_RUNNING/.test(child.tail())) {
        throw new HostError("HOST_NOT_RUNNING", `klbr serve exited with ${child.code} before it answered on ${this.socket}: ${child.tail() || "(no output)"}`);
      }
      if (Date.now() > deadline) throw new HostError("HOST_NOT_RUNNING", `klbr serve did not answer on ${this.socket} within ${START_TIMEOUT_MS / 1000}s (its log: ${child.log})`);
      await sleep(25);
    }
  }

  private async tryConnect(): Promise<ControlClient | null> {
    if (!existsSync(this.socket)) return null;
    try {
      return await ControlClient.connect(this.socket);
    } catch {
      return null; // a stale socket file from a daemon that died, or one still binding
    }
  }

  /** Start `klbr serve` in its own session (a client's Ctrl-C or hang-up never reaches it), logging to a file. */
  private start(): { exited: boolean; code: number | null; log: string; tail: () => string } {
    const { dataDir, workspace } = this.command;
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const log = daemonLogFile(dataDir);
    const fd = openSync(log, "a", 0o600);
    // What this start wrote, not what earlier ones did: the error quotes only its own lines.
    const from = statSync(log).size;
    const klbr = this.command.klbr ?? [process.execPath, ...process.execArgv, process.argv[1]!];
    const argv = [...klbr.slice(1), "-d", dataDir, ...(workspace ? ["-w", workspace] : []), "serve"];
    // (execa's types take a descriptor only as a literal, hence the casts.)
    const proc = execa(klbr[0]!, [...argv], { detached: true, stdin: "ignore", stdout: fd as 1, stderr: fd as 2, cleanup: false, reject: false });
    // The child has its own copy of the descriptor (a pipe through us would break when we exit).
    closeSync(fd);
    const state = {
      exited: false,
      code: null as number | null,
      log,
      tail: () => readTail(log, from),
    };
    // Reaped when it exits while we run; once started it belongs to nobody (it is the daemon).
    void proc.then((result) => {
      state.exited = true;
      state.code = result.exitCode ?? null;
    });
    proc.unref();
    this.onStarted?.(proc.pid, log);
    return state;
  }
}

/** The last lines of the daemon's log, for an error that says why it did not start. */
function readTail(file: string, from: number): string {
  try {
    return readFileSync(file).subarray(from).toString("utf8").trim().split("\n").slice(-5).join("\n");
  } catch {
    return "";
  }
}
