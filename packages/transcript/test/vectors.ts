// The shared-vector helpers, bound to fixtures/transcript/.
import { loadVectors as load, thrownCode, vectorFiles as files, type Vector } from "../../../test-support/vectors.ts";

export { thrownCode, type Vector };

/** Loads fixtures/transcript/<name>; a missing, malformed or empty file fails the run. */
export const loadVectors = (name: string): Vector[] => load("transcript", name);

/** The JSON files in fixtures/transcript/, sorted. */
export const vectorFiles = (): string[] => files("transcript");
