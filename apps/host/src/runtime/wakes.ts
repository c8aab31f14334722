import { frameInput } from "@klbr/transcript";
import type { HostDb } from "../db/open";
import type { HookOutcome } from "../requests/context";
import { deferredDueAt, getEvent, markConsumed, openDeferredInputs, pendingInputs, recordInput, setAttention, type EventRow } from "../store/events";
import { getWait, openWaits, wakeWait, wakeWaits, type WaitRow } from "../store/waits";
import { ROOT_SESSION } from "./ids";
import type { HooksService } from "./hooks-service";
import type { Stopping } from "./lifecycle";
import type { Notify } from "./notifier";

/** What the wakes service uses of the host. */
export interface WakesDeps {
  db: HostDb;
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
  restore(waits: readonly WaitRow[], inputs: (input: EventRow) => boolean = () => true): void {
    for (const wait of waits) if (wait.deadlineMs !== null) this.scheduleWaitDeadline(wait.id, wait.deadlineMs);
    for (const input of openDeferredInputs(this.deps.db)) if (inputs(input)) this.scheduleDeferredInput(input.id, deferredDueAt(input) ?? this.deps.now());
  }

  /** After taking a session over (C21): the timers of its open waits and deferred inputs. */
  restoreSession(sessionId: string): void {
    this.restore(openWaits(this.deps.db).filter((w) => w.sessionId === sessionId), (input) => input.sessionId === sessionId);
  }

  /** Clear every timer (the host stops; the next start rebuilds them from the log). */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  /** Operator (or classified external) input: recorded, planned by attention.plan, and it may wake a wait. */
  async postInput(text: string, opts: { source?: string; sessionId?: string } = {}): Promise<{ event_id: number; attention: unknown }> {
    const { db } = this.deps;
    const sessionId = opts.sessionId ?? ROOT_SESSION;
    const source = opts.source ?? "operator";
    const receivedAtMs = this.deps.now();
    const event = recordInput(db, { sessionId, source, receivedAtMs, payload: { text }, attention: null });
    const hook = await this.deps.hooks.invoke(null, "attention.plan", { event_id: event.id, source, received_at_ms: receivedAtMs });
    const planned = effectiveAttention(source, hook);
    // A defer is kept with the instant it is due, so a restart knows when to wake the session.
    const effective = planned.action === "defer" ? { ...planned, due_at_ms: receivedAtMs + Math.round(Number(planned.seconds) * 1000) } : planned;
    const attention = { hook: hook.ok ? hook.value : { unavailable: hook.reason }, revision: hook.revision, effective };
    setAttention(db, event.id, attention);
    const woken = effective.action === "wake" ? wakeWaits(db, sessionId, `event:${event.id}`, this.deps.now()) : [];
    this.announceInput({ ...event, attention }, woken);
    if (effective.action === "ignore") markConsumed(db, [event.id], this.deps.now());
    if (effective.action === "defer") this.scheduleDeferredInput(event.id, effective.due_at_ms as number);
    return { event_id: event.id, attention };
  }

  /** The tail every input's path shares (operator input, peer requests and results): the input notification, then the wakes. */
  announceInput(event: EventRow, woken: WaitRow[]): void {
    this.deps.notify({ type: "input", session_id: event.sessionId, event_id: event.id, source: event.source, attention: event.attention, at_ms: event.receivedAtMs });
    this.announceWakes(woken, `event:${event.id}`);
  }

  /** The session's unconsumed inputs, framed as the model reads them (derived from the durable rows), now consumed. */
  takePendingInputs(sessionId: string): string[] {
    const pending = pendingInputs(this.deps.db, sessionId);
    markConsumed(this.deps.db, pending.map((e) => e.id), this.deps.now());
    return pending.map((e) => frameInput({ source: e.source, received_at_ms: e.receivedAtMs, payload: e.payload as { text: string } }));
  }

  /** Wake a wait when its deadline passes (timers are rebuilt from the log after a restart). */
  scheduleWaitDeadline(waitId: string, deadlineMs: number): void {
    this.at(deadlineMs, () => this.gated(getWait(this.deps.db, waitId)?.sessionId, () => {
      // Only this wait: another open wait of the session has its own deadline, or none.
      const woken = wakeWait(this.deps.db, waitId, "deadline", this.deps.now());
      if (woken) this.announceWakes([woken], "deadline");
    }));
  }

  /**
   * Wake a deferred input's session when its seconds pass (timers are rebuilt from the log at
   * start, so a restart in between wakes it then, at once when it is overdue).
   */
  scheduleDeferredInput(eventId: number, dueAtMs: number): void {
    this.at(dueAtMs, () => this.gated(getEvent(this.deps.db, eventId)?.sessionId, () => this.wakeDeferred(eventId)));
  }

  /** Fire at once with one host; with many, only once this host holds the session (see WakesDeps.gate). */
  private gated(sessionId: string | undefined, fire: () => void): void {
    const gate = this.deps.gate;
    if (!gate || sessionId === undefined) return fire();
    void gate(sessionId).then((ok) => ok && !this.deps.life.stopping && fire(), () => undefined);
  }

  /**
   * Run `fire` at a host-clock instant (at once when overdue). Nothing is scheduled or fired while
   * the host stops: it would act on a closed log; the next start rebuilds the timer from the row.
   */
  private at(dueAtMs: number, fire: () => void): void {
    if (this.deps.life.stopping) return;
    const delay = Math.min(Math.max(0, dueAtMs - this.deps.now()), 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.deps.life.stopping) fire();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private wakeDeferred(eventId: number): void {
    const event = getEvent(this.deps.db, eventId);
    // Taken into account meanwhile (another wake carried it): nothing is left to wake for.
    if (!event || event.consumedAtMs !== null) return;
    const by = `deferred:event:${eventId}`;
    const woken = wakeWaits(this.deps.db, event.sessionId, by, this.deps.now());
    this.announceWakes(woken, by);
    this.deps.notify({ type: "deferred", session_id: event.sessionId, event_id: eventId, at_ms: this.deps.now() });
  }

  private announceWakes(woken: WaitRow[], wokenBy: string): void {
    if (woken.length === 0) return;
    const bySession = new Map<string, string[]>();
    for (const wait of woken) {
      // The inputs go with the session's first wake only: a subscriber shows each input once.
      const inputs = bySession.has(wait.sessionId) ? [] : this.takePendingInputs(wait.sessionId);
      bySession.set(wait.sessionId, inputs);
      this.deps.notify({ type: "wake", session_id: wait.sessionId, wait_id: wait.id, woken_by: wokenBy, at_ms: this.deps.now(), inputs });
    }
  }
}
