import { signalPinned, type NamespaceProcs } from "./sandbox.js";
import { killTagged, killTaggedOnce, type TreeTag } from "./tagged.js";
import { killTree, killTreeOnce, type KnownProcs } from "./tree.js";

/**
 * Kills one worker generation: its pid namespace (when it has one), its process tree and every
 * process carrying its tree tag. Killing the namespace's init makes the kernel kill every process
 * inside at once; the tree kill then takes the sandbox process outside it.
 */
export class TreeKiller {
  readonly #pid: number;
  readonly #known: KnownProcs;
  readonly #tag: TreeTag;
  readonly #ns: () => NamespaceProcs | undefined;
  #kill: Promise<unknown> | undefined;

  constructor(pid: number, known: KnownProcs, tag: TreeTag, ns: () => NamespaceProcs | undefined) {
    this.#pid = pid;
    this.#known = known;
    this.#tag = tag;
    this.#ns = ns;
  }

  /** Kill the tree (once: later calls share the first kill); its first pass is synchronous. */
  kill(): Promise<unknown> {
    const ns = this.#ns();
    if (ns) signalPinned(ns.init, "SIGKILL");
    this.#kill ??= killTree(this.#pid, this.#known, undefined, true);
    return this.#kill;
  }

  /**
   * One synchronous pass: the namespace, the group, what was seen of the tree, then every process
   * carrying the generation's tag (an orphan the worker's death handed to init is out of the tree).
   */
  killOnce(): void {
    const ns = this.#ns();
    if (ns) signalPinned(ns.init, "SIGKILL");
    killTreeOnce(this.#pid, this.#known, true);
    killTaggedOnce([this.#tag]);
  }

  /** Kill again and wait until the tree and every tagged process are confirmed gone. */
  async confirm(): Promise<void> {
    this.#kill = undefined;
    await this.kill();
    await killTagged(this.#tag);
  }
}
