import { HostError } from "../errors";

/** Where a host keeps its records: the embedded SQLite file of its data directory, or a PostgreSQL database (C21). */
export type DatabaseChoice = { kind: "sqlite" } | { kind: "postgres"; url: string; shown: string };

/** The environment variable `klbr serve --database` defaults to. */
export const DATABASE_URL_ENV = "KLBR_DATABASE_URL";

/** A URL as logs and errors may show it: the password, if any, replaced. */
export function redactUrl(url: URL): string {
  if (url.password === "") return url.href;
  const shown = new URL(url.href);
  shown.password = "***";
  return shown.href;
}

const invalid = (text: string, why: string, from: string) =>
  new HostError("DATABASE_URL_INVALID", `${from} ${JSON.stringify(text.replace(/:\/\/([^:/@]*):[^@/]*@/, "://$1:***@"))} ${why}`);

/**
 * The database `klbr serve` uses: `--database URL`, else `KLBR_DATABASE_URL`, else SQLite in the
 * data directory. Only PostgreSQL URLs are taken (`postgres://` or `postgresql://`, a database
 * named in the path; `?host=/dir` for a Unix socket), passed to the driver as given. Anything
 * else is DATABASE_URL_INVALID before anything starts, never a silent fall back to SQLite.
 */
export function databaseChoice(option: string | undefined, env: NodeJS.ProcessEnv = process.env): DatabaseChoice {
  const fromOption = option !== undefined;
  const text = fromOption ? option : env[DATABASE_URL_ENV];
  if (text === undefined || (!fromOption && text === "")) return { kind: "sqlite" };
  const from = fromOption ? "--database" : DATABASE_URL_ENV;
  const given = text.trim();
  let url: URL;
  try {
    // `postgres://USER@/DB?host=/dir` (libpq's and node-postgres's socket form) has an empty host,
    // which WHATWG URLs refuse when there is a user: checked as if it said localhost.
    url = new URL(given.replace(/^(postgres(?:ql)?:\/\/[^/?#]*@)\//i, "$1localhost/"));
  } catch {
    throw invalid(text, "is not a URL: give postgres://USER@HOST:PORT/DATABASE", from);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw invalid(text, `is a ${url.protocol.replace(/:$/, "")} URL; only PostgreSQL (postgres://...) is supported (SQLite is the default: leave ${from} out)`, from);
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) throw invalid(text, "names no database: give postgres://USER@HOST:PORT/DATABASE", from);
  const socket = url.searchParams.get("host");
  if (socket !== null && !socket.startsWith("/")) throw invalid(text, `has host=${JSON.stringify(socket)}: a socket directory is an absolute path`, from);
  const shown = url.password === "" ? given : given.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, "$1:***@");
  return { kind: "postgres", url: given, shown };
}
