import type { Notification } from "../requests/context";

/** Something that tells subscribers what happened (the host's one notification bus). */
export interface Notify {
  notify(notification: Notification): void;
}

/** The host's subscribers (repl, log followers, a model driver): told of every notification in order. */
export class Notifier implements Notify {
  private readonly listeners = new Set<(n: Notification) => void>();

  /** Tell every subscriber; a failing subscriber never breaks the host. */
  notify(notification: Notification): void {
    for (const listener of this.listeners) {
      try {
        listener(notification);
      } catch {
        /* a subscriber's failure is its own */
      }
    }
  }

  /** Subscribe to notifications; returns the unsubscribe function. */
  subscribe(listener: (n: Notification) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
