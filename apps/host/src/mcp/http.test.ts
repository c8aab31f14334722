import { describe, expect, test } from "vitest";
import { bearerMatches } from "./http";

describe("bearerMatches", () => {
  test("the token as a Bearer credential, the scheme in any case", () => {
    for (const header of ["Bearer tok-1", "bearer tok-1", "BEARER  tok-1", "Bearer tok-1 "]) expect([header, bearerMatches(header, "tok-1")]).toEqual([header, true]);
  });
  test("anything else is refused", () => {
    for (const header of [undefined, "", "tok-1", "Bearer", "Bearer tok-1x", "Bearer tok-", "Basic tok-1", "Bearer tok-1 extra", "Bearertok-1"]) expect([header, bearerMatches(header, "tok-1")]).toEqual([header, false]);
  });
});
