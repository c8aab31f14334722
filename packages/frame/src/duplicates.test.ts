import { describe, expect, it } from "vitest";
import { countParsedKeys, findDuplicateKey } from "./duplicates";

describe("countParsedKeys", () => {
  it("is 0 for scalars and null, whatever Object.keys would say of them", () => {
    expect(countParsedKeys(null)).toBe(0);
    expect(countParsedKeys(7)).toBe(0);
    expect(countParsedKeys("abc")).toBe(0);
    expect(countParsedKeys(true)).toBe(0);
  });

  it("counts own keys over every object, in arrays and objects, and not array indexes or string characters", () => {
    expect(countParsedKeys([])).toBe(0);
    expect(countParsedKeys(["ab", 1, null, { a: "xyz" }])).toBe(1);
    expect(countParsedKeys([[{ a: 1, b: 2 }], [{ c: 3 }]])).toBe(3);
    expect(countParsedKeys({ a: "xyz", b: null, c: { d: [1, { e: "ef" }] } })).toBe(5);
  });
});

describe("findDuplicateKey", () => {
  it("is undefined when no key repeats within one object", () => {
    expect(findDuplicateKey('{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}')).toBeUndefined();
    expect(findDuplicateKey('["a","a",{"a":"a"}]')).toBeUndefined();
  });

  it("names the repeated key of the innermost object", () => {
    expect(findDuplicateKey('{"a":1,"b":{"c":2,"c":3}}')).toBe("c");
  });

  it("reads keys with whitespace before the colon", () => {
    expect(findDuplicateKey('{"x" : 1, "y"\t:2, "x"\r\n: 3}')).toBe("x");
  });

  it("does not take string values for keys", () => {
    expect(findDuplicateKey('{"a":"b","b":1,"a":2}')).toBe("a");
    expect(findDuplicateKey('{"a":["b","c"],"b":1,"a":2}')).toBe("a");
  });

  it("keeps each object's keys apart, across arrays and nested objects", () => {
    expect(findDuplicateKey('{"a":[1,{"b":2}],"b":3,"a":4}')).toBe("a");
    expect(findDuplicateKey('[{"a":1},{"a":2,"b":[],"b":3}]')).toBe("b");
    expect(findDuplicateKey('{"a":{"b":1},"b":2,"c":[],"c":3}')).toBe("c");
  });

  it("compares keys after unescaping and skips escaped quotes", () => {
    expect(findDuplicateKey('{"\\u0061":1,"a":2}')).toBe("a");
    expect(findDuplicateKey('{"q\\"":1,"p":"\\"","q\\"":2}')).toBe('q"');
  });
});
