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
    const sandbox = status.sandbox as { mode: string; network: boolean } | undefined;
    if (sandbox) lines.push(`sandbox    ${sandbox.mode}${sandbox.mode === "none" ? "" : ` (network ${sandbox.network ? "on" : "off"})`}`);
    const limits = status.limits as { limits: string; mechanism: string | null; detail: string | null } | undefined;
    if (limits) lines.push(`limits     ${limits.limits ? `${limits.limits} (${String(limits.mechanism)}: ${String(limits.detail)})` : "none"}`);
    const driving = status.driving as { route: string; api: string; model: string } | null | undefined;
    if (driving !== undefined) lines.push(`model      ${driving ? `sessions driven by route ${driving.route} (${driving.api}, ${driving.model})` : "no route drives sessions"}`);
    const telemetry = status.telemetry as { endpoint: string; exported: number; dropped: number; pending: number } | null | undefined;
    if (telemetry !== undefined) lines.push(`telemetry  ${telemetry ? `traces to ${telemetry.endpoint}: ${telemetry.exported} spans exported, ${telemetry.dropped} dropped, ${telemetry.pending} pending` : "off"}`);
    lines.push(...hostLines(status));
    lines.push(hooks ? `hooks      pid ${String(hooks.pid)} ${String(hooks.state)} epoch ${String(hooks.epoch)} revision ${String(hooks.revision)}` : "hooks      none");
    for (const b of status.workbenches as Array<Record<string, unknown>>) {
      lines.push(`workbench  ${String(b.session_id)} ${String(b.generation)} pid ${String(b.pid)} ${stateText(b)}${b.running ? ` running ${String(b.running)}` : ""}`);
      if (b.stderr_tail) lines.push(`  stderr tail: ${JSON.stringify(String(b.stderr_tail).slice(-200))}`);
    }
    const pool = status.workbench_pool as { spare: { target: number; ready: number }; idle_timeout_ms: number | null; live: number; idle: number; culled: number } | undefined;
    if (pool) {
      const culling = pool.idle_timeout_ms === null ? "no idle culling" : `idle timeout ${pool.idle_timeout_ms} ms`;
      lines.push(`pool       ${pool.live} live, ${pool.idle} idle, ${pool.culled} culled (${culling}); spares ${pool.spare.ready} ready of ${pool.spare.target}`);
    }
    for (const r of (status.remote as Array<Record<string, unknown>> | undefined) ?? []) {
      const live = r.state === "dead" ? `dead (${String(r.ended)})` : `${String(r.state)} remote pid ${String(r.remote_pid)} ssh pid ${String(r.ssh_pid)}`;
      const running = (r.running as string[]).length > 0 ? ` running ${(r.running as string[]).join(",")}` : "";
      lines.push(`remote     ${String(r.namespace_id)} ${String(r.session_id)} ${String(r.target)} ${String(r.generation)} ${live}${running}`);
    }
    lines.push(`skills     revision ${String(status.skills_revision)} (live index ${String(status.skills_live_revision)})`, `inputs     ${String(status.pending_inputs)} pending`);
    const items = (status.open_work_items ?? []) as Array<Record<string, unknown>>;
    lines.push(`work items ${items.length} open`);
    for (const w of items) lines.push(`  ${String(w.work_item_id)} (${String(w.session_id)}${w.outcome ? `, ${String(w.outcome)}` : ""}) ${JSON.stringify(String(w.purpose).slice(0, 100))}`);
    const orientation = (status.orientation ?? []) as Array<{ scope: { kind: string; session_id?: string }; sources: Array<Record<string, unknown>> }>;
    if (orientation.length === 0) lines.push("orientation none adopted");
    for (const o of orientation) {
      const scope = o.scope.kind === "global" ? "global" : `session ${String(o.scope.session_id)}`;
      for (const src of o.sources) lines.push(`orientation ${scope} ${String(src.target)} <- ${String(src.candidate_id)} (op ${String(src.operation_id)}, ${String(src.digest).slice(0, 12)})`);
    }
    lines.push(...sessionLines(status));
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    client.close();
  }
}

/** C21: one line per host sharing the database, with its last heartbeat and the sessions it holds. */
export function hostLines(status: Record<string, unknown>): string[] {
  const hosts = status.hosts as Array<{ host_id: string; heartbeat_at_ms: number; alive: boolean; this_host: boolean; sessions: string[] }> | undefined;
  if (!hosts) return [];
  return hosts.map((h) => {
    const held = h.sessions.length === 0 ? "holds no session" : `holds ${h.sessions.join(",")}`;
    return `host       ${h.host_id}${h.this_host ? " (this host)" : ""} ${h.alive ? "alive" : "gone"}, last heartbeat ${new Date(h.heartbeat_at_ms).toISOString()}, ${held}`;
  });
}

/** A workbench's state; a culled one with the time of the cull (C19), told apart from a dead one. */
function stateText(b: Record<string, unknown>): string {
  return b.state === "culled" && typeof b.culled_at_ms === "number" ? `culled at ${new Date(b.culled_at_ms).toISOString()}` : String(b.state);
}

/** One line per session (root, peers, others with a workbench) and one per peer. */
export function sessionLines(status: Record<string, unknown>): string[] {
  const lines: string[] = [];
  for (const s of (status.sessions as Array<Record<string, unknown>> | undefined) ?? []) {
    const peer = s.peer_id ? ` peer ${String(s.peer_id)} of ${String(s.opener_session_id)}` : "";
    const gen = s.generation ? ` ${String(s.generation)}` : "";
    const running = s.running ? ` running ${String(s.running)}` : "";
    lines.push(`session    ${String(s.session_id)} ${String(s.kind)} ${String(s.status)}${peer} workbench${gen} ${stateText(s)}${running} inputs ${String(s.pending_inputs)} pending`);
  }
  for (const p of (status.peers as Array<Record<string, unknown>> | undefined) ?? []) {
    const r = p.requests as { pending: number; answered: number; cancelled: number };
    lines.push(`peer       ${String(p.peer_id)} session ${String(p.session_id)} of ${String(p.opener_session_id)} ${String(p.mode)} ${String(p.status)} requests ${r.pending} pending ${r.answered} answered ${r.cancelled} cancelled`);
  }
  return lines;
}

/** Register `klbr status`. */
export function register(program: Command): void {
  program
    .command("status")
    .description("workers, pids, generations, epoch, skills revision, sessions and peers, tails; exit 75 when no daemon runs")
    .option("--json", "machine output on stdout")
    .action(run(async (cmd) => statusCommand(optionsOf(cmd))));
}
