// A real OpenSSH server on 127.0.0.1 for the remote-namespace tests: a free port, a generated host
// key, a generated client key and its authorized_keys, all in one short temporary directory.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One running test sshd. */
export interface TestSshd {
  port: number;
  dir: string;
  /** The user the tests log in as (the one running them). */
  user: string;
  /** The client's private key. */
  identityFile: string;
  /** A known_hosts file holding this server's host key for [127.0.0.1]:port. */
  knownHosts: string;
  /** A known_hosts file holding another key for the same host (the wrong-host-key case). */
  wrongKnownHosts: string;
  /** The listening sshd's pid. */
  pid: number;
  /** A C14 target entry for this server, its workdir under `dir`. */
  target(name: string, workdir?: string): {
    name: string;
    ssh: { host: string; user: string; port: number; identity_file: string; known_hosts: string };
    python: string;
    workdir: string;
  };
  /** The per-connection sshd process that `pid` runs under (a child of the listener), or null. */
  sessionOf(pid: number): number | null;
  /** Every process below the listener (its connections and what they run). */
  descendants(): number[];
  /** Kill the server and everything below it, remove the directory. */
  stop(): Promise<void>;
}

const SSHD = ["/usr/sbin/sshd", "/usr/local/sbin/sshd", "/usr/bin/sshd"].find((p) => existsSync(p));

/** This repository's Python runtime, whose `set_child_subreaper` the sshd wrapper calls. */
const PYTHON_RUNTIME = fileURLToPath(new URL("../python", import.meta.url));

/** Python that becomes a child subreaper (the worker runtime's own call) and execs its arguments. */
const SUBREAPER_EXEC = [
  "import os, sys",
  "sys.path.insert(0, sys.argv[1])",
  "from klbr.worker.reaper import set_child_subreaper",
  "set_child_subreaper() or sys.exit('prctl(PR_SET_CHILD_SUBREAPER) failed')",
  "os.execv(sys.argv[2], sys.argv[2:])",
].join("\n");

/**
 * The interpreter the remote side runs: the one the local workers use (KLBR_PYTHON, else the real
 * `sys.executable` of `python3` on this PATH), by absolute path, since sshd's PATH may find another.
 */
function testPython(): string {
  if (process.env.KLBR_PYTHON) return process.env.KLBR_PYTHON;
  const found = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : "python3";
}

function ppidOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** Every live pid below `root` (one /proc snapshot). */
export function processesBelow(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = ppidOf(Number(name));
    if (ppid === null) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const found: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      found.push(child);
      stack.push(child);
    }
  }
  return found;
}

/** Whether `pid` is a live process (a zombie is not). */
export function isLive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function keygen(file: string): void {
  const done = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "klbr-test", "-f", file], { encoding: "utf8" });
  if (done.status !== 0) throw new Error(`ssh-keygen failed: ${done.error?.message ?? done.stderr}`);
}

function listening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = "";
    const onData = (chunk: Buffer) => {
      log += chunk.toString("utf8");
      if (/Server listening on/.test(log)) {
        child.stderr?.off("data", onData);
        child.off("exit", onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`sshd exited (${code}) before listening: ${log.trim()}`));
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  });
}

async function killBelowAndSelf(pid: number): Promise<void> {
  for (let round = 0; round < 50; round++) {
    const pids = [pid, ...processesBelow(pid)].filter(isLive);
    if (pids.length === 0) return;
    for (const p of pids) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function start(): Promise<TestSshd> {
  if (!SSHD) throw new Error("no sshd binary (apt-get install openssh-server)");
  const dir = mkdtempSync("/tmp/ksd-");
  try {
    const user = userInfo().username;
    keygen(join(dir, "host_key"));
    keygen(join(dir, "client_key"));
    keygen(join(dir, "other_key"));
    writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "client_key.pub")), { mode: 0o600 });
    // The privilege separation directory sshd insists on (root only; Debian creates it at boot).
    if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
    const python = testPython();
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort();
      const config = join(dir, "sshd_config");
      writeFileSync(
        config,
        [
          `Port ${port}`,
          "ListenAddress 127.0.0.1",
          `HostKey ${join(dir, "host_key")}`,
          `PidFile ${join(dir, "sshd.pid")}`,
          `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
          // Keys live under /tmp (world-writable): the ownership checks would refuse them.
          "StrictModes no",
          "UsePAM no",
          "PasswordAuthentication no",
          "KbdInteractiveAuthentication no",
          "PubkeyAuthentication yes",
          "PermitRootLogin prohibit-password",
          "AllowStreamLocalForwarding yes",
          "AllowAgentForwarding no",
          "X11Forwarding no",
          "PermitTTY no",
          "MaxStartups 64",
          "MaxSessions 64",
          "LogLevel INFO",
          "",
        ].join("\n"),
      );
      // sshd runs as a child subreaper (the attribute survives the exec): a process of a session
      // whose parents exit first (a keeper still killing its tree after sshd closed the
      // connection) stays below the listener until it is gone, so "nothing below sshd" means
      // nothing of any session is left, not that it was reparented to init.
      const child = spawn(python, ["-I", "-S", "-c", SUBREAPER_EXEC, PYTHON_RUNTIME, SSHD, "-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
      child.stderr?.resume();
      try {
        await listening(child);
      } catch (error) {
        lastError = error;
        child.kill("SIGKILL");
        continue;
      }
      const pid = child.pid!;
      const hostKey = readFileSync(join(dir, "host_key.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ");
      const otherKey = readFileSync(join(dir, "other_key.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ");
      writeFileSync(join(dir, "known_hosts"), `[127.0.0.1]:${port} ${hostKey}\n`);
      writeFileSync(join(dir, "wrong_known_hosts"), `[127.0.0.1]:${port} ${otherKey}\n`);
      return {
        port,
        dir,
        user,
        pid,
        identityFile: join(dir, "client_key"),
        knownHosts: join(dir, "known_hosts"),
        wrongKnownHosts: join(dir, "wrong_known_hosts"),
        target: (name, workdir = join(dir, "work")) => ({
          name,
          ssh: { host: "127.0.0.1", user, port, identity_file: join(dir, "client_key"), known_hosts: join(dir, "known_hosts") },
          python,
          workdir,
        }),
        sessionOf: (target) => {
          let current: number | null = target;
          while (current !== null && current > 1) {
            const parent = ppidOf(current);
            if (parent === pid) return current;
            current = parent;
          }
          return null;
        },
        descendants: () => processesBelow(pid).filter(isLive),
        stop: async () => {
          await killBelowAndSelf(pid);
          rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
        },
      };
    }
    throw lastError;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Start a test sshd. Where it cannot start, the tests that need it are skipped with the reason
 * (`skip`), except in CI (`CI` set), where that is a failure: CI installs openssh-server.
 */
export async function startTestSshd(): Promise<{ sshd: TestSshd; skip: null } | { sshd: null; skip: string }> {
  try {
    return { sshd: await start(), skip: null };
  } catch (error) {
    if (process.env.CI) throw new Error(`CI: the test sshd must start: ${(error as Error).message}`);
    return { sshd: null, skip: `sshd cannot be started here (${(error as Error).message}); remote tests skipped` };
  }
}
