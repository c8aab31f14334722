import { describe, expect, it } from "vitest";
import { ByteTail } from "./tail.js";

describe("ByteTail", () => {
  it("keeps everything below capacity", () => {
    const t = new ByteTail(8);
    t.push(Buffer.from("abc"));
    t.push(Buffer.from("de"));
    expect(t.text()).toBe("abcde");
    expect(t.totalBytes).toBe(5);
  });

  it("keeps only the last bytes once full, across wrap-around", () => {
    const t = new ByteTail(8);
    t.push(Buffer.from("0123456"));
    t.push(Buffer.from("789ab"));
    expect(t.text()).toBe("456789ab");
    t.push(Buffer.from("c"));
    expect(t.text()).toBe("56789abc");
  });

  it("a chunk larger than the capacity keeps its end", () => {
    const t = new ByteTail(4);
    t.push(Buffer.from("x"));
    t.push(Buffer.from("abcdefghij"));
    expect(t.text()).toBe("ghij");
    expect(t.totalBytes).toBe(11);
  });

  it("matches a naive model for random pushes", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const t = new ByteTail(16);
    let all = "";
    for (let i = 0; i < 500; i++) {
      const n = Math.floor(rnd() * 40);
      const s = Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join("");
      t.push(Buffer.from(s));
      all += s;
      expect(t.text()).toBe(all.slice(-16));
    }
  });

  it("rejects a non-positive capacity", () => {
    expect(() => new ByteTail(0)).toThrow(/0/);
  });
});
