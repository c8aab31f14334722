import { workerCommand, type WorkerCommand } from "./command.js";
import { SupervisorError, type OutputTails } from "./errors.js";
import { launcherEnv, tagsIn } from "./guard-launch.js";
import type { WorkerLimits } from "./limits/index.js";
import type { StartWorkerOptions } from "./options.js";
import { wrapCommand, type PinnedProc } from "./sandbox.js";
import { spawnGuarded, type SpawnedWorker, type SpawnFailure } from "./spawn.js";
import type { ByteTail } from "./tail.js";
import type { TreeTag } from "./tagged.js";
import type { KnownProcs } from "./tree.js";

/** Where one worker runs and what it is given: its private dir and socket, its token and tree tag. */
export interface LaunchPlace {
  dir: string;
  socketPath: string;
  token: string;
  tag: TreeTag;
  /** Passed as `--skills`: the file `materialize` wrote, else the option's. */
  skillsFile: string | undefined;
}

/**
 * The worker's command (command.ts) behind the sandbox's prefix: what the guard runs. Built before
 * anything listens or spawns, so a command that cannot be built fails the launch first.
 */
export function launchCommand(opts: StartWorkerOptions, place: LaunchPlace): WorkerCommand {
  const command = workerCommand(opts, place.socketPath, place.token, place.tag, place.skillsFile);
  return wrapCommand(command, opts.sandbox?.prefix(place.dir) ?? []);
}

/** What the launch reports to its worker, and the parts of the worker it fills. */
export interface LaunchSpec {
  opts: StartWorkerOptions;
  place: LaunchPlace;
  known: KnownProcs;
  stdout: ByteTail;
  stderr: ByteTail;
  limits: WorkerLimits;
  tails(): OutputTails;
  /** The guard reported its one child (pinned; undefined when already gone). */
  onInner(inner: PinnedProc | undefined): void;
  /** The guard could not run the command: the start fails with this error. */
  onStartFailed(error: SupervisorError): void;
  onExit(code: number | null, signal: string | null): void;
}

/**
 * Spawn `command` under the guard. What runs on the host before any namespace exists (the guard,
 * bwrap, ssh) gets the launcher's environment, the host's minimal one and the tree tags: the
 * worker's own environment reaches the worker alone, on the guard's env fd (guard-launch.ts), and
 * with the sandbox's `envHandoff` bwrap passes it inside. The C17 limits are guard options,
 * applied in the guard's child before the command runs: one it cannot apply refuses the start.
 */
export function launchWorker(command: WorkerCommand, spec: LaunchSpec): SpawnedWorker | SpawnFailure {
  const { opts, place, limits } = spec;
  return spawnGuarded({
    command,
    cwd: opts.cwd,
    transportToken: opts.transport !== undefined ? place.token : undefined,
    spare: opts.spare === true,
    dir: place.dir,
    known: spec.known,
    tag: place.tag,
    launcher: launcherEnv([place.tag, ...tagsIn(opts.env)]),
    envHandoff: opts.sandbox?.envHandoff,
    stdout: spec.stdout,
    stderr: spec.stderr,
    onInner: spec.onInner,
    onGuardFailed: (error) => {
      const code = /: limits: /.test(error) ? "LIMITS_UNAVAILABLE" : "WORKER_SPAWN_FAILED";
      spec.onStartFailed(new SupervisorError(code, error, { tails: spec.tails() }));
    },
    guardOptions: (guard) => limits.guardArgv(guard),
    onExit: spec.onExit,
  });
}
