import { describe, expect, it } from "vitest";
import { findDuplicateKey, isWellFormedText } from "./json";

describe("findDuplicateKey", () => {
  it.each([
    ['{"a":1,"b":2}', undefined],
    ['{"a":1,"a":2}', "a"],
    ['{"a":{"b":1},"c":{"b":2}}', undefined],
    ['{"x":[{"a":1,"a":1}]}', "a"],
    ['{"a":"a","b":["a","a"]}', undefined],
    ['{"\\u0061":1,"a":2}', "a"],
    ['{"q\\"":1,"q\\"":2}', 'q"'],
    ['[{"k":1},{"k":1}]', undefined],
    ['{"o":{"k":1,"j":{"k":2}},"k":3}', undefined],
    ['{"o":{"k":1,"j":{}},"o":3}', "o"],
    ['{"a\\\\":1,"b":"\\\\"}', undefined],
  ])("%s -> %s", (text, expected) => {
    JSON.parse(text); // the helper's precondition
    expect(findDuplicateKey(text)).toBe(expected);
  });
});

describe("isWellFormedText", () => {
  it.each([
    ["plain", true],
    ["\u{1D11E}", true],
    ["\uD834", false],
    ["\uDD1E", false],
    ["a\uDD1E\uD834", false],
  ])("%j -> %s", (text, expected) => {
    expect(isWellFormedText(text)).toBe(expected);
  });
});
