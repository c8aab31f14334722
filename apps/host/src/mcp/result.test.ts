import { describe, expect, test } from "vitest";
import { cellResult, type ExecReply } from "./result";

const reply = (over: Partial<ExecReply>): ExecReply => ({
  id: "ex-1",
  session_id: "s",
  status: "ok",
  output: [],
  truncated_bytes: 0,
  error: null,
  ended_by: "worker",
  started_at_ms: 1_796_608_541_779,
  ended_at_ms: 1_796_608_541_999,
  ...over,
});
const noBlob = () => Promise.reject(new Error("no blob expected"));

describe("cellResult", () => {
  test("a display whose image did not fit its frame says so, as the model's result frame does", async () => {
    const result = await cellResult(
      reply({ displays: [{ seq: 0, digest: "sha256:aa", mimes: ["text/plain"], text: "<Big>", images: [], omitted: { "image/png": 5 * 1024 * 1024 } }] }),
      noBlob,
    );
    expect(result.content.slice(1)).toEqual([{ type: "text", text: "<Big>\n[image/png not shown: 5.0 MiB is past the 1 MiB a display carries]" }]);
  });

  test("a text display is its text; an image display its image", async () => {
    const result = await cellResult(
      reply({
        displays: [
          { seq: 0, digest: "sha256:aa", mimes: ["text/plain", "text/markdown"], text: "**md**", plain: "M()", images: [] },
          { seq: 1, digest: "sha256:bb", mimes: ["text/plain", "image/png"], text: "<Figure>", images: [{ mime: "image/png", digest: "sha256:cc", width: 1, height: 1, bytes: 3 }] },
        ],
      }),
      async (digest) => ({ media_type: "image/png", base64: digest === "sha256:cc" ? "AAAA" : "" }),
    );
    expect(result.content.slice(1)).toEqual([
      { type: "text", text: "**md**" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
    ]);
    expect(result.isError).toBe(false);
  });
});
