import { describe, expect, it } from "vitest";
import { sandboxSettings } from "./settings";

describe("sandboxSettings", () => {
  it("defaults to no sandbox with the network on", () => {
    expect(sandboxSettings({}, {})).toEqual({ mode: "none", network: true, bwrap: "bwrap" });
  });

  it("reads KLBR_SANDBOX, KLBR_SANDBOX_NETWORK and KLBR_BWRAP; options win over the environment", () => {
    const env = { KLBR_SANDBOX: "bwrap", KLBR_SANDBOX_NETWORK: "off", KLBR_BWRAP: "/opt/bwrap" };
    expect(sandboxSettings({}, env)).toEqual({ mode: "bwrap", network: false, bwrap: "/opt/bwrap" });
    expect(sandboxSettings({ network: "on" }, env)).toMatchObject({ mode: "bwrap", network: true });
    expect(sandboxSettings({ sandbox: "bwrap", network: false }, {})).toMatchObject({ mode: "bwrap", network: false });
    for (const off of ["off", "false", "0", "no", "OFF"]) expect(sandboxSettings({ sandbox: "bwrap", network: off }, {}).network).toBe(false);
    for (const on of ["on", "true", "1", "yes"]) expect(sandboxSettings({ sandbox: "bwrap", network: on }, {}).network).toBe(true);
  });

  it("refuses what it does not understand, naming the value", () => {
    expect(() => sandboxSettings({ sandbox: "docker" }, {})).toThrow(expect.objectContaining({ code: "SANDBOX_INVALID", message: expect.stringContaining('"docker"') }));
    expect(() => sandboxSettings({}, { KLBR_SANDBOX: "firejail" })).toThrow(expect.objectContaining({ code: "SANDBOX_INVALID" }));
    expect(() => sandboxSettings({ sandbox: "bwrap", network: "maybe" }, {})).toThrow(expect.objectContaining({ code: "SANDBOX_INVALID", message: expect.stringContaining('"maybe"') }));
  });

  it("refuses the network off without a sandbox to enforce it", () => {
    expect(() => sandboxSettings({ network: false }, {})).toThrow(expect.objectContaining({ code: "SANDBOX_INVALID", message: expect.stringContaining("--sandbox bwrap") }));
    expect(() => sandboxSettings({}, { KLBR_SANDBOX_NETWORK: "off" })).toThrow(expect.objectContaining({ code: "SANDBOX_INVALID" }));
  });
});
