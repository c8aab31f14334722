// A real PostgreSQL for the multi-host tests (C21): a throwaway cluster in a temporary directory,
// reachable only by its Unix socket in that directory (listen_addresses = ''), so two runs never
// share a port and nothing outside the directory can connect. No PGlite: it is one connection,
// and leases are about many.
//
// initdb refuses root, so as root the cluster runs as `postgres` (Debian's package creates it),
// else as nobody; as any other user it runs as that user. A watchdog shell holds the read end of
// a pipe whose write end only this process has: when this process stops the cluster, or dies in
// any way (kill -9 included), the pipe reaches EOF and the watchdog stops PostgreSQL and removes
// the directory, so no postgres is ever left behind.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One running throwaway cluster. */
export interface TestPostgres {
  /** The temporary directory: the socket, `data/` and `postgres.log`. */
  readonly dir: string;
  /** The superuser every test connects as (trust auth over the socket). */
  readonly user: string;
  /** A `postgresql://` URL for a database of this cluster (`postgres` unless named). */
  url(database?: string): string;
  /** node-postgres connection settings for a database of this cluster. */
  config(database?: string): { host: string; port: number; user: string; database: string };
  /** Create a fresh database (a unique name unless given) and return its URL. */
  createDatabase(name?: string): string;
  /** The postmaster's pid (read from postmaster.pid; changes across restart). */
  pid(): number;
  /**
   * `pg_ctl restart -m fast`: every open connection is cut, the cluster is back when this resolves.
   * Asynchronous on purpose: this process's event loop keeps running meanwhile, as a host's does,
   * so its pools see their connections drop when they drop.
   */
  restart(): Promise<void>;
  /** Stop the cluster and remove its directory; resolves once both are done. */
  stop(): Promise<void>;
}

const PORT = 5432;
const USER = "klbr";

/** The directory holding initdb and pg_ctl: KLBR_TEST_PG_BIN, else Debian's newest under /usr/lib/postgresql. */
export function postgresBinDir(): string | null {
  if (process.env.KLBR_TEST_PG_BIN) return process.env.KLBR_TEST_PG_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "initdb")));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : null;
}

/** Why PostgreSQL cannot run here, or null when its binaries are there. */
export function postgresMissing(): string | null {
  return postgresBinDir() ? null : "no PostgreSQL server binaries (apt-get install postgresql, or set KLBR_TEST_PG_BIN)";
}

/** Who runs the cluster: a command prefix and the uid/gid that must own its directory. */
function runAs(): { prefix: string[]; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  const uid = id("-u");
  const gid = id("-g");
  if (uid.status === 0 && gid.status === 0) {
    return { prefix: ["runuser", "-u", "postgres", "--"], uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  }
  return { prefix: ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"], uid: 65534, gid: 65534 };
}

/** Run one SQL statement as the superuser over the cluster's socket. */
function psql(bin: string, dir: string, statement: string): void {
  run([join(bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", dir, "-p", String(PORT), "-U", USER, "-d", "postgres", "-c", statement], dir);
}

const urlOf = (dir: string, database: string) => `postgresql://${USER}@localhost:${PORT}/${database}?host=${encodeURIComponent(dir)}`;

/** `run` without blocking the event loop. */
function runAsync(argv: string[], cwd: string): Promise<void> {
  const [cmd, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`${argv.join(" ")} exited ${code ?? signal}: ${stderr.trim()}`))));
  });
}

function run(argv: string[], cwd: string): void {
  const [cmd, ...args] = argv;
  const done = spawnSync(cmd!, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (done.status !== 0) throw new Error(`${argv.join(" ")} exited ${done.status ?? done.signal}: ${(done.stderr || done.stdout || "").trim()}`);
}

/** The watchdog: waits for EOF on stdin (our stop, or our death), then stops the cluster and removes its directory. */
const WATCHDOG = `trap '' HUP INT
cat >/dev/null
$PG_AS "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
  $PG_AS "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
  { [ -f "$PG_DIR/data/postmaster.pid" ] && kill -9 "$(head -n 1 "$PG_DIR/data/postmaster.pid")"; }
rm -rf "$PG_DIR"`;

/** Settings of a test cluster; `durable: false` (the default) turns off fsync, which tests never need. */
export interface StartOptions {
  durable?: boolean;
}

/** initdb + pg_ctl start in a fresh temporary directory, owned by a watchdog from the first moment. */
export async function startPostgres(options: StartOptions = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(postgresMissing()!);
  const as = runAs();
  // Short: the socket path ($dir/.s.PGSQL.5432) must fit in sun_path (108 bytes). As root the
  // cluster's user must reach it, which root's own TMPDIR may not let it: /tmp then.
  const dir = mkdtempSync(join(as ? "/tmp" : tmpdir(), "klbr-pg-"));
  if (as) chownSync(dir, as.uid, as.gid);
  const prefix = as?.prefix ?? [];
  const watchdog: ChildProcess = spawn("sh", ["-c", WATCHDOG], {
    detached: true, // its own session: a signal to our process group leaves it to clean up
    stdio: ["pipe", "ignore", "ignore"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PG_AS: prefix.join(" "), PG_BIN: bin, PG_DIR: dir },
  });
  const gone = new Promise<void>((resolve) => watchdog.once("exit", () => resolve()));
  watchdog.unref();
  (watchdog.stdin as unknown as { unref(): void }).unref();
  const stop = async () => {
    watchdog.ref(); // until the watchdog is done, this process must not exit early
    watchdog.stdin!.end();
    await gone;
  };
  const data = join(dir, "data");
  const pgCtl = (...args: string[]) => run([...prefix, join(bin, "pg_ctl"), "-D", data, ...args], dir);
  try {
    run([...prefix, join(bin, "initdb"), "-D", data, "-U", USER, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"], dir);
    const fast = options.durable ? [] : ["fsync = off", "synchronous_commit = off", "full_page_writes = off"];
    appendFileSync(
      join(data, "postgresql.conf"),
      [
        "",
        "# klbr test cluster: socket only, in its own directory",
        "listen_addresses = ''",
        `unix_socket_directories = '${dir}'`,
        `port = ${PORT}`,
        "max_connections = 200",
        "shared_buffers = 32MB",
        ...fast,
        "",
      ].join("\n"),
    );
    pgCtl("-l", join(dir, "postgres.log"), "-w", "-t", "60", "start");
  } catch (error) {
    await stop();
    throw error;
  }
  const config = (database = "postgres") => ({ host: dir, port: PORT, user: USER, database });
  let created = 0;
  return {
    dir,
    user: USER,
    config,
    url: (database = "postgres") => urlOf(dir, database),
    createDatabase(name = `t${process.pid}_${++created}_${Date.now().toString(36)}`) {
      psql(bin, dir, `CREATE DATABASE "${name}"`);
      return urlOf(dir, name);
    },
    pid: () => Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]),
    restart: () => runAsync([...prefix, join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "postgres.log"), "-m", "fast", "-w", "-t", "60", "restart"], dir),
    stop,
  };
}

/** Where the run's shared cluster is (set by startRunPostgres for the test processes). */
const RUN_DIR_ENV = "KLBR_TEST_PG_DIR";

/** A vitest globalSetup body: one cluster for the whole run, named to the test processes by environment. */
export async function startRunPostgres(): Promise<(() => Promise<void>) | undefined> {
  if (postgresMissing() || process.env[RUN_DIR_ENV]) return undefined;
  const pg = await startPostgres();
  process.env[RUN_DIR_ENV] = pg.dir;
  return async () => {
    delete process.env[RUN_DIR_ENV];
    await pg.stop();
  };
}

/**
 * A fresh database for one test file: in the run's cluster when there is one, else in a cluster
 * of its own (stopped by `stop`). Where PostgreSQL is not installed the tests are skipped with the
 * reason, except in CI (`CI` set), where that is a failure: .ci/run installs it.
 */
export async function testDatabase(): Promise<{ url: string; stop(): Promise<void>; skip: null } | { url: null; stop(): Promise<void>; skip: string }> {
  const missing = postgresMissing();
  if (missing) {
    if (process.env.CI) throw new Error(`CI: PostgreSQL must run for the multi-host tests: ${missing}`);
    return { url: null, stop: async () => {}, skip: `${missing}; PostgreSQL tests skipped` };
  }
  const shared = process.env[RUN_DIR_ENV];
  if (shared && existsSync(join(shared, `.s.PGSQL.${PORT}`))) {
    const name = `t${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    psql(postgresBinDir()!, shared, `CREATE DATABASE "${name}"`);
    return { url: urlOf(shared, name), stop: async () => {}, skip: null };
  }
  const pg = await startPostgres();
  return { url: pg.createDatabase(), stop: () => pg.stop(), skip: null };
}
