import { describe, expect, it } from "vitest";
import { isDigest } from "./digest";
import { isSkillError, SkillError } from "./errors";

const HEX = "ab".repeat(32);

describe("isDigest", () => {
  it("is true only for a string of 64 lowercase hex characters", () => {
    expect(isDigest(HEX)).toBe(true);
    expect(isDigest(HEX.toUpperCase())).toBe(false);
    expect(isDigest(HEX.slice(1))).toBe(false);
  });

  it("is false for a value that only stringifies to a digest (a one-element array, an object)", () => {
    expect(isDigest([HEX])).toBe(false);
    expect(isDigest({ toString: () => HEX })).toBe(false);
  });
});

describe("isSkillError", () => {
  it("is false for a function, even one carrying the brand: only error objects are SkillErrors", () => {
    const branded = Object.assign(() => undefined, { [Symbol.for("@klbr/skills/SkillError")]: true });
    expect(isSkillError(branded)).toBe(false);
    expect(isSkillError(new SkillError("SKILL_NOT_FOUND", "m"))).toBe(true);
  });
});

describe("isDigest is anchored at both ends", () => {
  it("refuses 64 hex characters with anything before or after them", () => {
    expect(isDigest(`0${HEX}`)).toBe(false);
    expect(isDigest(`${HEX}0`)).toBe(false);
    expect(isDigest(`x${HEX}`)).toBe(false);
    expect(isDigest(`${HEX}\n`)).toBe(false);
  });
});
