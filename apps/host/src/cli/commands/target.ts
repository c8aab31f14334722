import type { Command } from "commander";
import { HostError } from "../../errors";
import { optionsOf, run, userPath, type CommonOptions } from "../command";
import { dataDirOf } from "../target";

/** Options of `klbr target add`. */
export interface TargetAddOptions extends CommonOptions {
  host: string;
  user?: string;
  port?: string;
  identity?: string;
  knownHosts: string;
  python?: string;
  workdir: string;
  replace?: boolean;
}

/** `klbr target add NAME ...`: write one C14 target into `<data>/targets.json`. */
export async function targetAdd(name: string, opts: TargetAddOptions): Promise<number> {
  const { readTargets, withTarget, writeTargets } = await import("@klbr/remote");
  const port = opts.port === undefined ? 22 : Number(opts.port);
  if (!Number.isInteger(port)) throw new HostError("CLI_USAGE", `--port must be an integer, got ${JSON.stringify(opts.port)}`);
  const dataDir = dataDirOf(opts);
  const target = {
    name,
    ssh: {
      host: opts.host,
      user: opts.user ?? null,
      port,
      identity_file: opts.identity === undefined ? null : userPath(opts.identity),
      known_hosts: userPath(opts.knownHosts),
    },
    python: opts.python ?? "python3",
    workdir: opts.workdir,
  };
  writeTargets(dataDir, withTarget(readTargets(dataDir), target, opts.replace === true));
  process.stderr.write(`klbr: target ${name} ${opts.replace ? "written" : "added"}\n`);
  return 0;
}

/** `klbr target list`: the targets, one line each (or the file as JSON). */
export async function targetList(opts: CommonOptions & { json?: boolean }): Promise<number> {
  const { readTargets } = await import("@klbr/remote");
  const file = readTargets(dataDirOf(opts));
  if (opts.json) process.stdout.write(`${JSON.stringify(file)}\n`);
  else {
    for (const t of file.targets) {
      process.stdout.write(`${t.name}  ${t.ssh.user ? `${t.ssh.user}@` : ""}${t.ssh.host}:${t.ssh.port}  python ${t.python}  workdir ${t.workdir}\n`);
    }
  }
  return 0;
}

/** `klbr target remove NAME`. */
export async function targetRemove(name: string, opts: CommonOptions): Promise<number> {
  const { readTargets, withoutTarget, writeTargets } = await import("@klbr/remote");
  const dataDir = dataDirOf(opts);
  writeTargets(dataDir, withoutTarget(readTargets(dataDir), name));
  process.stderr.write(`klbr: target ${name} removed\n`);
  return 0;
}

/** `klbr target test NAME`: connect, check the remote python, report the round trip. */
export async function targetTest(name: string, opts: CommonOptions & { json?: boolean }): Promise<number> {
  const { findTarget, probeTarget, readTargets } = await import("@klbr/remote");
  const probe = await probeTarget(findTarget(readTargets(dataDirOf(opts)), name));
  if (opts.json) process.stdout.write(`${JSON.stringify(probe)}\n`);
  else process.stdout.write(`${probe.target}: python ${probe.python}${probe.python_ok ? "" : " (too old: 3.11+ needed)"}, round trip ${probe.round_trip_ms} ms\n`);
  return probe.python_ok ? 0 : 69;
}

/** Register `klbr target add|list|remove|test`. */
export function register(program: Command): void {
  const target = program.command("target").description("remote targets (<data>/targets.json): add, list, remove, test");
  target
    .command("add")
    .description("add a target reached with the system's ssh (BatchMode, its own known_hosts)")
    .argument("<name>", "the target's name (an identifier)")
    .requiredOption("--host <host>", "host name or address")
    .option("--user <user>", "remote user (default: ssh's)")
    .option("--port <port>", "ssh port", "22")
    .option("--identity <file>", "private key file (default: ssh's)")
    .requiredOption("--known-hosts <file>", "known_hosts file holding the target's host key (the only one checked)")
    .option("--python <python>", "remote interpreter, 3.11+", "python3")
    .requiredOption("--workdir <dir>", "absolute remote directory for the runtime and the worker's socket")
    .option("--replace", "overwrite a target of the same name")
    .action(run(async (cmd, name) => targetAdd(name!, optionsOf(cmd))));
  target
    .command("list")
    .description("list the targets")
    .option("--json", "targets.json as JSON on stdout")
    .action(run(async (cmd) => targetList(optionsOf(cmd))));
  target
    .command("remove")
    .description("remove a target")
    .argument("<name>", "the target's name")
    .action(run(async (cmd, name) => targetRemove(name!, optionsOf(cmd))));
  target
    .command("test")
    .description("connect, check the remote python version, report the round trip")
    .argument("<name>", "the target's name")
    .option("--json", "machine output on stdout")
    .action(run(async (cmd, name) => targetTest(name!, optionsOf(cmd))));
}
