// The shared-vector helpers, bound to fixtures/usage/.
import { loadVectors as load, thrownCode, vectorFiles as files, type Vector } from "../../../test-support/vectors.ts";

export { thrownCode, type Vector };

/** Loads fixtures/usage/<name>; a missing, malformed or empty file fails the run. */
export const loadVectors = (name: string): Vector[] => load("usage", name);

/** The JSON files in fixtures/usage/, sorted. */
export const vectorFiles = (): string[] => files("usage");
