/** What a process in a bubblewrap sandbox may see; every path absolute. */
export interface BwrapPolicy {
  /** Bound read-write at the same path. */
  workspace: string;
  /** Where the process starts (default the workspace). */
  chdir?: string;
  /** Each gets a fresh empty tmpfs (`/tmp`, the host's TMPDIR): nothing of the host's shows through. */
  freshDirs: string[];
  /** Directories masked by an empty tmpfs, wherever they lie (the data directory). */
  hiddenDirs: string[];
  /** Files masked by an empty read-only file (a control socket outside the data directory). */
  hiddenFiles: string[];
  /** Bound read-only after the masks, so they show even under a hidden directory (a release, the runtime). */
  readOnly: string[];
  /** Bound read-write after the masks (the worker's private socket directory). */
  readWrite: string[];
  /** false: a network namespace of its own with only a down loopback. */
  network: boolean;
  /** The size of each fresh tmpfs in bytes (the `tmp` limit of C17: bwrap's `--size`, 0.6+). */
  tmpBytes?: number;
}

/**
 * The bwrap argv (program first, ending in `--`) that runs a command under `policy`, in the order
 * bubblewrap applies mounts: `/` read-only, a fresh /dev and /proc (the latter of its own pid
 * namespace) with the kernel's settings in it read-only, fresh temporary directories, the
 * workspace, then the masks, then what must show through them. No capabilities. The namespaces:
 * pid (its init ends every process inside when it dies), ipc, uts, cgroup where the kernel has
 * them, and net when the network is off; `--die-with-parent` and `--new-session` (no TIOCSTI on
 * the host's terminal). Pure: the same policy gives the same argv.
 */
export function bwrapArgv(bwrap: string, policy: BwrapPolicy): string[] {
  // --cap-drop ALL: bwrap started by root keeps every capability inside unless told otherwise, and
  // CAP_SYS_ADMIN would unmount the mask over the data directory (unprivileged bwrap drops them anyway).
  const argv = [bwrap, "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
  if (!policy.network) argv.push("--unshare-net");
  argv.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...KERNEL_SETTINGS);
  for (const dir of outermostFirst(policy.freshDirs)) {
    if (policy.tmpBytes !== undefined) argv.push("--size", String(policy.tmpBytes));
    argv.push("--tmpfs", dir);
  }
  argv.push("--bind", policy.workspace, policy.workspace);
  for (const dir of outermostFirst(policy.hiddenDirs)) argv.push("--tmpfs", dir);
  for (const file of policy.hiddenFiles) argv.push("--ro-bind", "/dev/null", file);
  for (const path of outermostFirst(policy.readOnly)) argv.push("--ro-bind", path, path);
  for (const path of outermostFirst(policy.readWrite)) argv.push("--bind", path, path);
  argv.push("--chdir", policy.chdir ?? policy.workspace, "--");
  return argv;
}

/**
 * The kernel's settings, covered read-only over the fresh /proc and the /sys that `/` shows. A
 * root daemon's cells are root without capabilities, and root owns these files: bwrap's own cover
 * of /proc/sys did not apply when it ran as root (bubblewrap 0.8, measured), leaving
 * `kernel.core_pattern` (code execution as root on the host) writable. /proc/sys shows the reader's namespaces' values whatever proc
 * instance it comes from. The `-try` ones do not exist on every kernel.
 */
const KERNEL_SETTINGS = [
  "--ro-bind", "/proc/sys", "/proc/sys",
  "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
  "--ro-bind-try", "/proc/irq", "/proc/irq",
  "--ro-bind-try", "/proc/bus", "/proc/bus",
  "--ro-bind-try", "/sys", "/sys",
];

/** Unique paths, a parent before anything under it (a later mount covers an earlier one). */
function outermostFirst(paths: string[]): string[] {
  return [...new Set(paths)].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function depth(path: string): number {
  return path.split("/").filter(Boolean).length;
}

/** True when `path` is `dir` or lies under it (both absolute and normalized). */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || dir === "/" || path.startsWith(`${dir}/`);
}
