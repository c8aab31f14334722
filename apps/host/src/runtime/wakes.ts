import { frameInput } from "@klbr/transcript";
import type { HookOutcome, Notification } from "../requests/context";
import type { Store } from "../store/api";
import { deferredDueAt, type EventRow } from "../store/events";
import type { WaitRow } from "../store/waits";
import { ROOT_SESSION } from "./ids";
import type { HooksService } from "./hooks-service";
import type { Stopping } from "./lifecycle";
import type { Notify } from "./notifier";

/** What the wakes service uses of the host. */
export interface WakesDeps {
  store: Pick<Store, "recordInput" | "setAttention" | "wakeWaits" | "markConsumed" | "takePendingInputs" | "openDeferredInputs" | "openWaits" | "getWait" | "wakeWait" | "getEvent" | "wakeForInput">;
  now(): number;
  notify: Notify["notify"];
  life: Stopping;
  hooks: Pick<HooksService, "invoke">;
  /**
   * Many hosts (C21): whether this host holds (or could claim) the session, asked before a timer
   * fires for it; a wake of a session another host holds is that host's to fire. Absent: one host.
   */
  gate?(sessionId: string): Promise<boolean>;
}

/** Operator input always wakes, whatever the hook said (C6); others follow a valid decision, or wake when there is none. */
export function effectiveAttention(source: string, hook: HookOutcome): { action: string; [k: string]: unknown } {
  if (source === "operator") return { action: "wake", priority: 100, forced: true };
  if (!hook.ok) return { action: "wake", priority: 50, reason: `attention hook unavailable: ${hook.reason}` };
  return hook.value as { action: string };
}

/**
 * Wakes: operator and peer input (recorded, planned by attention.plan), the waits it wakes, wait
 * deadlines and deferred inputs with their timers (rebuilt from the log at start), and the
 * announcements subscribers get for each.
 */
export class Wakes {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly deps: WakesDeps) {}

  /** After a restart: the timers of open waits with a deadline and of deferred inputs, from the log. */
  async restore(waits: readonly WaitRow[], inputs: (input: EventRow) => boolean = () => true): Promise<void> {
    for (const wait of waits) if (wait.deadlineMs !== null) this.scheduleWaitDeadline(wait.id, wait.deadlineMs);
    for (const input of await this.deps.store.openDeferredInputs()) if (inputs(input)) this.scheduleDeferredInput(input.id, deferredDueAt(input) ?? this.deps.now());
  }

  /** After taking a session over (C21): the timers of its open waits and deferred inputs (a failed read is said on stderr). */
  restoreSession(sessionId: string): void {
    const { store } = this.deps;
    void store
      .openWaits()
      .then((waits) => this.restore(waits.filter((w) => w.sessionId === sessionId), (input) => input.sessionId === sessionId))
      .catch((error: unknown) => this.failed(`the timers of session ${sessionId}`, error));
  }

  /** Clear every timer (the host stops; the next start rebuilds them from the log). */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  /** Operator (or classified external) input: recorded, planned by attention.plan, and it may wake a wait. */
  async postInput(text: string, opts: { source?: string; sessionId?: string } = {}): Promise<{ event_id: number; attention: unknown }> {
    const { store } = this.deps;
    const sessionId = opts.sessionId ?? ROOT_SESSION;
    const source = opts.source ?? "operator";
    const receivedAtMs = this.deps.now();
    const event = await store.recordInput({ sessionId, source, receivedAtMs, payload: { text }, attention: null });
    const hook = await this.deps.hooks.invoke(null, "attention.plan", { event_id: event.id, source, received_at_ms: receivedAtMs });
    const planned = effectiveAttention(source, hook);
    // A defer is kept with the instant it is due, so a restart knows when to wake the session.
    const effective = planned.action === "defer" ? { ...planned, due_at_ms: receivedAtMs + Math.round(Number(planned.seconds) * 1000) } : planned;
    const attention = { hook: hook.ok ? hook.value : { unavailable: hook.reason }, revision: hook.revision, effective };
    await store.setAttention(sessionId, event.id, attention);
    const woken = effective.action === "wake" ? await store.wakeWaits(sessionId, `event:${event.id}`, this.deps.now()) : [];
    await this.announceInput({ ...event, attention }, woken);
    if (effective.action === "ignore") await store.markConsumed(sessionId, [event.id], this.deps.now());
    if (effective.action === "defer") this.scheduleDeferredInput(event.id, effective.due_at_ms as number);
    return { event_id: event.id, attention };
  }

  /**
   * The tail every input's path shares (operator input, peer requests and results): the input
   * notification, then the wakes. The wakes' inputs are taken first, so the notifications go out
   * together, in one tick, as when the log was read synchronously (a turn the input notification
   * starts cannot come between them).
   */
  async announceInput(event: EventRow, woken: WaitRow[]): Promise<void> {
    const wakes = await this.wakesOf(woken, `event:${event.id}`);
    this.deps.notify({ type: "input", session_id: event.sessionId, event_id: event.id, source: event.source, attention: event.attention, at_ms: event.receivedAtMs });
    for (const wake of wakes) this.deps.notify(wake);
  }

  /** The session's unconsumed inputs, framed as the model reads them (derived from the durable rows), now consumed. */
  async takePendingInputs(sessionId: string): Promise<string[]> {
    const pending = await this.deps.store.takePendingInputs(sessionId, this.deps.now());
    return pending.map((e) => frameInput({ source: e.source, received_at_ms: e.receivedAtMs, payload: e.payload as { text: string } }));
  }

  /** Wake a wait when its deadline passes (timers are rebuilt from the log after a restart). */
  scheduleWaitDeadline(waitId: string, deadlineMs: number): void {
    const { store } = this.deps;
    this.at(deadlineMs, async () => {
      const sessionId = (await store.getWait(waitId))?.sessionId;
      // Gone from the log: nothing is left to wake.
      if (sessionId === undefined) return;
      await this.gated(sessionId, async () => {
        // Only this wait: another open wait of the session has its own deadline, or none.
        const woken = await store.wakeWait(sessionId, waitId, "deadline", this.deps.now());
        if (woken) await this.announceWakes([woken], "deadline");
      });
    });
  }

  /**
   * Wake a deferred input's session when its seconds pass (timers are rebuilt from the log at
   * start, so a restart in between wakes it then, at once when it is overdue).
   */
  scheduleDeferredInput(eventId: number, dueAtMs: number): void {
    this.at(dueAtMs, async () => {
      const sessionId = (await this.deps.store.getEvent(eventId))?.sessionId;
      // Gone from the log: nothing is left to wake for.
      if (sessionId !== undefined) await this.gated(sessionId, () => this.wakeDeferred(sessionId, eventId));
    });
  }

  /** Fire at once with one host; with many, only once this host holds the session (see WakesDeps.gate). A refused claim fires nothing. */
  private async gated(sessionId: string, fire: () => Promise<void>): Promise<void> {
    const gate = this.deps.gate;
    if (!gate) return fire();
    const ok = await gate(sessionId).catch(() => false);
    if (ok && !this.deps.life.stopping) await fire();
  }

  /**
   * Run `fire` at a host-clock instant (at once when overdue). Nothing is scheduled or fired while
   * the host stops: it would act on a closed log; the next start rebuilds the timer from the row.
   */
  private at(dueAtMs: number, fire: () => Promise<void>): void {
    if (this.deps.life.stopping) return;
    const delay = Math.min(Math.max(0, dueAtMs - this.deps.now()), 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.deps.life.stopping) fire().catch((error: unknown) => this.failed("a timer", error));
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private async wakeDeferred(sessionId: string, eventId: number): Promise<void> {
    const by = `deferred:event:${eventId}`;
    // Null: taken into account meanwhile (another wake carried it), nothing is left to wake for.
    const woken = await this.deps.store.wakeForInput(sessionId, eventId, by, this.deps.now());
    if (woken === null) return;
    await this.announceWakes(woken, by);
    this.deps.notify({ type: "deferred", session_id: sessionId, event_id: eventId, at_ms: this.deps.now() });
  }

  private async announceWakes(woken: WaitRow[], wokenBy: string): Promise<void> {
    for (const wake of await this.wakesOf(woken, wokenBy)) this.deps.notify(wake);
  }

  /** The wake notifications of `woken`, their inputs taken from the log: a session's inputs go with its first wake only (a subscriber shows each input once). */
  private async wakesOf(woken: WaitRow[], wokenBy: string): Promise<Notification[]> {
    const taken = new Map<string, string[]>();
    const wakes: Notification[] = [];
    for (const wait of woken) {
      const inputs = taken.has(wait.sessionId) ? [] : await this.takePendingInputs(wait.sessionId);
      taken.set(wait.sessionId, inputs);
      wakes.push({ type: "wake", session_id: wait.sessionId, wait_id: wait.id, woken_by: wokenBy, at_ms: this.deps.now(), inputs });
    }
    return wakes;
  }

  /** A timer's or a restore's log read or write that failed: said on stderr (never an unhandled rejection); nothing while the host stops, whose log is closing. */
  private failed(what: string, error: unknown): void {
    if (!this.deps.life.stopping) process.stderr.write(`klbr: wakes: ${what} failed: ${String(error)}\n`);
  }
}
