import { HostError } from "../errors";

/** Where `klbr serve --database` (or KLBR_DATABASE_URL) puts the durable log (C21). */
export type DatabaseOption = { dialect: "sqlite"; file: string } | { dialect: "postgres"; url: string };

/**
 * `--database FILE|postgres://...`: a SQLite file (a path, or `sqlite:PATH`) that several hosts on
 * this machine share, or a PostgreSQL URL. Undefined when neither the option nor the variable is set.
 */
export function parseDatabase(value: string | undefined, env: NodeJS.ProcessEnv = process.env): DatabaseOption | undefined {
  const text = value ?? env.KLBR_DATABASE_URL;
  if (text === undefined || text === "") return undefined;
  if (/^postgres(ql)?:\/\//i.test(text)) return { dialect: "postgres", url: text };
  const file = text.startsWith("sqlite:") ? text.slice("sqlite:".length) : text;
  if (file === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(file)) throw new HostError("CLI_USAGE", `--database needs a SQLite file path or a postgres:// URL, got ${JSON.stringify(text)}`);
  return { dialect: "sqlite", file };
}
