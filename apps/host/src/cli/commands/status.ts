import type { Command } from "commander";
import { optionsOf, run, type CommonOptions } from "../command";
import { EXIT } from "../exit-codes";
import { connectDaemon } from "../target";

/** `klbr status`: workers, pids, generations, epoch, skills revision, tails. */
export async function statusCommand(opts: CommonOptions & { json?: boolean }): Promise<number> {
  const client = await connectDaemon(opts);
  if (!client) {
    if (opts.json) process.stdout.write(`${JSON.stringify({ running: false })}\n`);
    else process.stderr.write("klbr: HOST_NOT_RUNNING: no daemon running\nhint: start a daemon with `klbr serve`\n");
    return EXIT.NOTHING_RAN;
  }
  try {
    const status = (await client.request({ op: "status" })) as Record<string, unknown>;
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ running: true, ...status })}\n`);
      return 0;
    }
    const hooks = status.hooks as Record<string, unknown> | null;
    const lines = [`data dir   ${String(status.data_dir)}`, `workspace  ${String(status.workspace)}`];
    lines.push(hooks ? `hooks      pid ${String(hooks.pid)} ${String(hooks.state)} epoch ${String(hooks.epoch)} revision ${String(hooks.revision)}` : "hooks      none");
    for (const b of status.workbenches as Array<Record<string, unknown>>) {
      lines.push(`workbench  ${String(b.session_id)} ${String(b.generation)} pid ${String(b.pid)} ${String(b.state)}${b.running ? ` running ${String(b.running)}` : ""}`);
      if (b.stderr_tail) lines.push(`  stderr tail: ${JSON.stringify(String(b.stderr_tail).slice(-200))}`);
    }
    lines.push(`skills     revision ${String(status.skills_revision)}`, `inputs     ${String(status.pending_inputs)} pending`);
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    client.close();
  }
}

/** Register `klbr status`. */
export function register(program: Command): void {
  program
    .command("status")
    .description("workers, pids, generations, epoch, skills revision, tails; exit 75 when no daemon runs")
    .option("--json", "machine output on stdout")
    .action(run(async (cmd) => statusCommand(optionsOf(cmd))));
}
