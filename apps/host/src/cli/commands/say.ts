import type { Command } from "commander";
import { HostError } from "../../errors";
import { optionsOf, run, type CommonOptions } from "../command";
import { openTarget } from "../target";

// C2 identifiers; checked here so a bad one is a usage error before any host is started.

/** `klbr say TEXT [--session S]`: post operator input, as `:say` in the repl does; prints the event id. */
export async function sayCommand(text: string, opts: CommonOptions & { session?: string; json?: boolean }): Promise<number> {
  if (opts.session !== undefined && !/^[A-Za-z0-9_.-]{1,128}$/.test(opts.session)) {
    throw new HostError("CLI_USAGE", `--session must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ${JSON.stringify(opts.session)}`);
  }
  const target = await openTarget(opts);
  try {
    const posted = await target.say(text, opts.session);
    if (opts.json) process.stdout.write(`${JSON.stringify(posted)}\n`);
    else {
      const effective = (posted.attention as { effective?: { action?: string } } | null)?.effective?.action;
      process.stdout.write(`event ${posted.event_id}${effective ? ` ${effective}` : ""}\n`);
    }
    return 0;
  } finally {
    await target.close();
  }
}

/** Register `klbr say`. */
export function register(program: Command): void {
  program
    .command("say")
    .description("post operator input (wakes a waiting session); prints `event ID ACTION`")
    .argument("<text>", "the input text")
    .option("-s, --session <id>", "the session it is for (default: the root session)")
    .option("--json", "the recorded event id and attention decision as JSON on stdout")
    .action(run(async (cmd, text) => sayCommand(text!, optionsOf(cmd))));
}
