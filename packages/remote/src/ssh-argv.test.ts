import { describe, expect, it } from "vitest";
import { shellJoin, shellQuote, sshArgv } from "./ssh-argv.js";
import type { Target } from "./targets.js";

const target: Target = {
  name: "build",
  ssh: { host: "build.example", user: "ci", port: 2222, identity_file: "/keys/id", known_hosts: "/keys/known_hosts" },
  python: "python3",
  workdir: "/srv/klbr",
};

/** The value of every `-o Name=value`. */
function options(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  argv.forEach((a, i) => {
    if (a === "-o") {
      const [k, ...v] = argv[i + 1]!.split("=");
      out[k!] = v.join("=");
    }
  });
  return out;
}

describe("sshArgv", () => {
  it("passes everything explicitly: batch mode, the target's known_hosts only, no forwarding of agent or X11", () => {
    const argv = sshArgv(target, "true");
    expect(argv[0]).toBe("ssh");
    expect(argv.slice(1, 3)).toEqual(["-F", "none"]);
    expect(argv).toContain("-a");
    expect(argv).toContain("-x");
    expect(argv).toContain("-T");
    expect(options(argv)).toMatchObject({
      BatchMode: "yes",
      StrictHostKeyChecking: "yes",
      UserKnownHostsFile: "/keys/known_hosts",
      GlobalKnownHostsFile: "none",
      UpdateHostKeys: "no",
      ForwardAgent: "no",
      ForwardX11: "no",
      ControlMaster: "no",
      ExitOnForwardFailure: "yes",
      IdentitiesOnly: "yes",
    });
    expect(argv.slice(-5)).toEqual(["-i", "/keys/id", "--", "build.example", "true"]);
    expect(argv[argv.indexOf("-p") + 1]).toBe("2222");
    expect(argv[argv.indexOf("-l") + 1]).toBe("ci");
    expect(argv).not.toContain("-R");
    expect(argv).not.toContain("-L");
  });

  it("is exactly this argv, option for option and in this order", () => {
    expect(sshArgv(target, "true")).toEqual([
      "ssh", "-F", "none", "-T", "-x", "-a", "-e", "none",
      "-o", "BatchMode=yes",
      "-o", "StrictHostKeyChecking=yes",
      "-o", "UserKnownHostsFile=/keys/known_hosts",
      "-o", "GlobalKnownHostsFile=none",
      "-o", "UpdateHostKeys=no",
      "-o", "CheckHostIP=no",
      "-o", "ForwardAgent=no",
      "-o", "ForwardX11=no",
      "-o", "ControlMaster=no",
      "-o", "ControlPath=none",
      "-o", "PermitLocalCommand=no",
      "-o", "ExitOnForwardFailure=yes",
      "-o", "ServerAliveInterval=15",
      "-o", "ServerAliveCountMax=3",
      "-o", "ConnectTimeout=15",
      "-o", "LogLevel=ERROR",
      "-p", "2222",
      "-l", "ci",
      "-o", "IdentitiesOnly=yes", "-i", "/keys/id",
      "--", "build.example", "true",
    ]);
  });

  it("carries exactly the one Unix-socket forward asked for, remote to local", () => {
    const argv = sshArgv(target, "cmd", { forward: { remote: "/srv/klbr/r.sock", local: "/tmp/klbr-x/w.sock" } });
    expect(argv.filter((a) => a === "-R")).toHaveLength(1);
    expect(argv[argv.indexOf("-R") + 1]).toBe("/srv/klbr/r.sock:/tmp/klbr-x/w.sock");
    expect(argv.indexOf("-R")).toBeLessThan(argv.indexOf("--"));
  });

  it("leaves out user and identity when the target does not name them", () => {
    const argv = sshArgv({ ...target, ssh: { ...target.ssh, user: null, identity_file: null } }, "true", { ssh: "/opt/ssh" });
    expect(argv[0]).toBe("/opt/ssh");
    expect(argv).not.toContain("-l");
    expect(argv).not.toContain("-i");
    expect(options(argv).IdentitiesOnly).toBeUndefined();
  });
});

describe("shellQuote", () => {
  it("leaves plain words alone and single-quotes the rest", () => {
    expect(shellQuote("/srv/klbr-1.2")).toBe("/srv/klbr-1.2");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("a b")).toBe("'a b'");
    expect(shellQuote("it's $HOME `x`")).toBe(`'it'\\''s $HOME \`x\`'`);
    expect(shellJoin(["python3", "-c", "print('x')"])).toBe(`python3 -c 'print('\\''x'\\'')'`);
  });

  it("round-trips through a real shell", async () => {
    const { execFileSync } = await import("node:child_process");
    const words = ["a b", "it's", "$HOME", "`id`", "\n", "\\", "*", ""];
    const out = execFileSync("sh", ["-c", `printf '%s\\0' ${shellJoin(words)}`]).toString("utf8");
    expect(out.split("\0").slice(0, -1)).toEqual(words);
  });
});
