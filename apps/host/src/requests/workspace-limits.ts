import { cpuVerdict, limitVerdict, markGroup, watchCpu, withGuardLimits, type LimitsMechanism, type LimitVerdict } from "@klbr/supervisor";

/** The C17 limits of one `workspace.run` command: its own group (it is not in its caller's tree). */
export interface CommandLimits {
  /** The guard's argv with the limits it applies. */
  argv(guard: [string, ...string[]]): [string, ...string[]];
  /** Watch the group's CPU time; `kill` ends the command's tree at the cpu limit. */
  watch(kill: () => void): void;
  /** What ended the command, if a limit did (read from the mechanism). */
  verdict(exit: { code: number | null; signal: string | null }): LimitVerdict | null;
  /** Stop watching, remove the group (whatever is left in it killed). */
  release(): Promise<void>;
}

const NONE: CommandLimits = {
  argv: (guard) => guard,
  watch: () => undefined,
  verdict: () => null,
  release: async () => undefined,
};

/** The limits of one command under `mechanism` (none when the host sets no limit). Throws LIMITS_UNAVAILABLE. */
export function commandLimits(mechanism: LimitsMechanism | undefined): CommandLimits {
  if (!mechanism) return NONE;
  const group = mechanism.createGroup("run");
  const mark = group ? markGroup(group, mechanism.limits) : undefined;
  let over: LimitVerdict | undefined;
  let stop: () => void = () => undefined;
  return {
    argv: (guard) => withGuardLimits(guard, mechanism.guardLimits(group)) as [string, ...string[]],
    watch(kill) {
      const cpuMs = mechanism.limits.cpuMs;
      if (!group || cpuMs === undefined) return;
      stop = watchCpu(() => group.cpuMs(), cpuMs, (used) => {
        over = cpuVerdict(mechanism.limits, used, mechanism.kind);
        kill();
      });
    },
    verdict: (exit) => over ?? limitVerdict(mechanism.kind, mechanism.limits, group, mark, exit) ?? null,
    async release() {
      stop();
      await group?.remove();
    },
  };
}
