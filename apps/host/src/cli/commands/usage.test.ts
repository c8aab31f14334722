import { describe, expect, test } from "vitest";
import { execCommand } from "./exec";
import { logCommand } from "./log";

// Bad arguments are refused with CLI_USAGE before anything is opened (no daemon, no database needed).
describe("CLI usage errors", () => {
  test.each(["abc", "-1", "2.5", ""])("klbr log -n %j is refused", async (limit) => {
    await expect(logCommand({ dataDir: "/nonexistent-klbr", limit })).rejects.toMatchObject({ code: "CLI_USAGE", message: expect.stringContaining(JSON.stringify(limit)) });
  });

  test("klbr exec -f with a file that cannot be read names it", async () => {
    await expect(execCommand(undefined, { dataDir: "/nonexistent-klbr", file: "/nonexistent-klbr/cell.py" })).rejects.toMatchObject({
      code: "CLI_USAGE",
      message: expect.stringContaining("/nonexistent-klbr/cell.py"),
    });
  });
});
