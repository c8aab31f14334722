import { describe, expect, it } from "vitest";
import { sshFailure } from "./ssh-run.js";
import { parseTarget } from "./targets.js";

// Built per call, not at collection: a fixture made while vitest collects makes every mutant it
// reaches "static" (the whole suite re-run per mutant).
const target = () => parseTarget({ name: "box", ssh: { host: "10.0.0.9", port: 2200, known_hosts: "/k/kh" }, workdir: "/w" });
const where = 'target "box" (10.0.0.9:2200)';

function said(exitCode: number | undefined, stderr: string): string | null {
  const error = sshFailure(target(), exitCode, stderr);
  return error === null ? null : `${error.code}: ${error.message}`;
}

describe("sshFailure: ssh's own exit (255, or none) read as Ansible reads it", () => {
  it("a command's own exit status is not ssh's failure", () => {
    expect(said(0, "Permission denied")).toBeNull();
    expect(said(1, "Host key verification failed.")).toBeNull();
    expect(said(254, "Connection refused")).toBeNull();
    expect(said(97, "")).toBeNull();
  });

  it("names the host key file on a host key mismatch", () => {
    expect(said(255, "Host key verification failed.\n")).toBe(
      `REMOTE_HOST_KEY_MISMATCH: ${where}: its host key is not the one in /k/kh: Host key verification failed.`,
    );
    expect(said(255, "@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @")).toMatch(/^REMOTE_HOST_KEY_MISMATCH: /);
    expect(said(undefined, "No ED25519 host key is known for [h]:22 and you have requested strict checking.\nhost key for h not known")).toMatch(/^REMOTE_HOST_KEY_MISMATCH: /);
    expect(said(255, "the host key mismatch")).toMatch(/^REMOTE_HOST_KEY_MISMATCH: /);
  });

  it("a refused forward says what the server needs", () => {
    expect(said(255, "Error: remote port forwarding failed for listen path /w/x.sock")).toBe(
      `REMOTE_FORWARD_REFUSED: ${where}: the server refused the worker's Unix-socket forward (its sshd needs AllowStreamLocalForwarding and AllowTcpForwarding not "no"): Error: remote port forwarding failed for listen path /w/x.sock`,
    );
  });

  it("a refused key is an authentication failure", () => {
    expect(said(255, "user@10.0.0.9: Permission denied (publickey).")).toBe(`REMOTE_AUTH_FAILED: ${where}: authentication failed: user@10.0.0.9: Permission denied (publickey).`);
  });

  it("anything else is a connection failure quoting ssh's last three lines, or saying there was none", () => {
    expect(said(255, "one\ntwo\nthree\nfour\n")).toBe(`REMOTE_CONNECT_FAILED: ${where}: ssh failed: two | three | four`);
    expect(said(255, "  \n")).toBe(`REMOTE_CONNECT_FAILED: ${where}: ssh failed: no message`);
    expect(said(undefined, "")).toBe(`REMOTE_CONNECT_FAILED: ${where}: ssh failed: no message`);
  });

  it("the host key check comes before the forward and the authentication checks", () => {
    expect(said(255, "Permission denied\nremote port forwarding failed\nHost key verification failed.")).toMatch(/^REMOTE_HOST_KEY_MISMATCH: /);
    expect(said(255, "Permission denied\nremote port forwarding failed")).toMatch(/^REMOTE_FORWARD_REFUSED: /);
  });
});
