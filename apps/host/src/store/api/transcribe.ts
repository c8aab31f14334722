/** Transcribe records (store/transcribe.ts). */
export interface TranscribeStore {
  /**
   * Take a session's new inputs (consumed: the model reads them now) and header observations into
   * its transcript before a request. Most steps find nothing new, and that is read without the write
   * lock: BEGIN IMMEDIATE is taken only when there is something to append, and under it the rows are
   * read again and appended exactly as when the lock was always taken. `now` is read under the lock.
   */
  transcribeNew(sessionId: string, pinId: number, now: () => number): Promise<void>;
}
