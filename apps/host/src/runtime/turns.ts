import { findRoute, routeKey, type Route, type RoutesFile } from "@klbr/driver";
import type { Notification } from "../requests/context";
import { readRoutes } from "./routes-file";
import { SessionTurns, type TurnHost } from "./session";

/** Which route drives sessions: a named one, or the file's default. */
export interface DriveOptions {
  route?: string;
  maxCellsPerTurn?: number;
}

/**
 * Drives every session on one route (C10, C13: the default route unless one is named). It
 * listens to the host's wakes and inputs and gives each session its own turn loop.
 */
export class Turns {
  private readonly sessions = new Map<string, SessionTurns>();
  readonly route: Route;

  /**
   * Read the routes and check the route's key now: a route whose key variable is unset is a clear
   * error at start (DRIVER_KEY_UNSET), not a turn that fails later.
   */
  constructor(
    private readonly host: TurnHost,
    routesPath: string,
    private readonly options: DriveOptions,
  ) {
    const file: RoutesFile = readRoutes(routesPath);
    const name = options.route ?? file.default;
    if (name === null || name === undefined) throw Object.assign(new Error(`no route to drive sessions with: add one with \`klbr route add\` (${routesPath})`), { code: "DRIVER_UNKNOWN_ROUTE" });
    this.route = findRoute(file, name);
    routeKey(this.route);
  }

  /** After a restart: requests cut short are closed, and every session that was mid-turn resumes. */
  async resume(closeCut = true): Promise<void> {
    const { store } = this.host;
    // With other hosts alive (C21), their requests are theirs: a session's are closed when it is taken over.
    const cut = closeCut ? await store.closeRunningModelRequests(this.host.now()) : [];
    if (cut.length > 0) await store.recordIncident("model.requests_cut_short", { requests: cut }, this.host.now());
    for (const sessionId of await store.sessionsToResume()) this.kick(sessionId);
  }

  /** A notification that may start a turn: a wake, a deferred input's time, or an input whose attention says wake. */
  follow(n: Notification): void {
    // A deferred or ignored input starts no turn: its wake (if any) comes later, as a wake.
    const action = n.type === "input" ? (n.attention as { effective?: { action?: string } } | null)?.effective?.action : undefined;
    if (n.type === "wake" || n.type === "deferred" || (n.type === "input" && (action === undefined || action === "wake"))) this.kick(n.session_id);
  }

  /** Look at one session (a wake or an input arrived). */
  kick(sessionId: string): void {
    // Many hosts (C21): a turn runs only on the host holding the session's lease, claimed first.
    const claim = this.host.claim;
    if (claim) void claim(sessionId).then((held) => held && this.kickHeld(sessionId), () => undefined);
    else this.kickHeld(sessionId);
  }

  private kickHeld(sessionId: string): void {
    let turns = this.sessions.get(sessionId);
    if (!turns) {
      turns = new SessionTurns(this.host.forSession?.(sessionId) ?? this.host, sessionId, () => this.route, this.options.maxCellsPerTurn);
      this.sessions.set(sessionId, turns);
    }
    turns.kick();
  }

  /** Stop a session's running turn (the operator's Ctrl-C); false when none runs. */
  stopTurn(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.stopTurn() ?? false;
  }

  /** Every session's running turn settles (after the host stopped its workers). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((s) => s.current));
  }

  /** The turn loop a session runs now, if any (a draining peer stops after it). */
  turnOf(sessionId: string): Promise<void> | null {
    return this.sessions.get(sessionId)?.current ?? null;
  }

  /** Whether any session has a turn running. */
  get busy(): boolean {
    return [...this.sessions.values()].some((s) => s.busy);
  }

  /** Wait until no session has a turn running (tests, `klbr chat`). */
  async idle(): Promise<void> {
    while (this.busy) await Promise.allSettled([...this.sessions.values()].map((s) => s.current));
  }
}
