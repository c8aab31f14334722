// The EnvelopeError a call throws, for tests that check its code, path or words.
import { EnvelopeError } from "../src/error.js";

/** The EnvelopeError `fn` throws; any other error is rethrown, and no error at all fails the test. */
export function envelopeErrorOf(fn: () => unknown): EnvelopeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof EnvelopeError) return error;
    throw error;
  }
  throw new Error("expected an EnvelopeError");
}
