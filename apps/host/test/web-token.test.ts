// C23's token, as a client without a cookie jar meets it (curl, fetch, a script): the URL
// `klbr web` prints opens the page by itself, with an HttpOnly cookie for what follows, like
// Jupyter's ?token=; the token also works as a header (Jupyter's `Authorization: token ...`).
// Anything without it, or with a wrong one, is 401.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startWebServer, type WebServer } from "../src/web/server";
import { klbrRun } from "./cli-run";
import { removeTree, tempDir } from "./helpers";
import { buildWebAssets } from "./web-support";

const TOKEN = "token-test-0123456789abcdef0123";
let dataDir: string;
let web: WebServer;

beforeAll(async () => {
  dataDir = tempDir("klbr-webtok-");
  expect((await klbrRun(["--data-dir", dataDir, "init"])).code).toBe(0);
  const assetsDir = buildWebAssets(join(dataDir, "assets"));
  web = await startWebServer({ database: join(dataDir, "klbr.sqlite"), routesFile: join(dataDir, "routes.json"), controlSocket: join(dataDir, "klbr.sock"), token: TOKEN, assetsDir });
}, 120_000);
afterAll(async () => {
  await web?.close();
  removeTree(dataDir);
});

const origin = () => new URL(web.url).origin;

describe("the web view's token", () => {
  test("the printed URL, fetched as it is, is the page, with the HttpOnly cookie for what follows", async () => {
    const res = await fetch(web.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await res.text()).toContain('id="klbr-data"');
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(new RegExp(`^klbr_web_${web.port}=${TOKEN};`));
    expect(cookie).toMatch(/HttpOnly/);
    const again = await fetch(`${origin()}/api/sessions`, { headers: { cookie: cookie.split(";")[0]! } });
    expect(again.status).toBe(200);
  });

  test("?token= on an API path answers it", async () => {
    const res = await fetch(`${origin()}/api/sessions?token=${TOKEN}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toHaveProperty("sessions");
  });

  test("the token as an Authorization header (token or Bearer)", async () => {
    for (const scheme of ["token", "Bearer", "bearer"]) {
      expect([scheme, (await fetch(`${origin()}/api/sessions`, { headers: { authorization: `${scheme} ${TOKEN}` } })).status]).toEqual([scheme, 200]);
    }
  });

  test("no token, a wrong one, in any place: 401, and no cookie", async () => {
    for (const [path, headers] of [
      ["/", {}],
      ["/?token=wrong", {}],
      [`/?token=${TOKEN}x`, {}],
      ["/api/sessions", { authorization: "token wrong" }],
      ["/api/sessions", { authorization: `Basic ${TOKEN}` }],
      ["/api/sessions", { cookie: `klbr_web_${web.port}=wrong` }],
    ] as Array<[string, Record<string, string>]>) {
      const res = await fetch(`${origin()}${path}`, { headers, redirect: "manual" });
      expect([path, res.status, res.headers.get("set-cookie")]).toEqual([path, 401, null]);
    }
  });

  test("a write with the token in the URL is still no write: 401 without the cookie, 405 with it", async () => {
    expect((await fetch(`${origin()}/api/sessions?token=${TOKEN}`, { method: "POST" })).status).toBe(401);
    expect((await fetch(`${origin()}/api/sessions`, { method: "DELETE", headers: { authorization: `token ${TOKEN}` } })).status).toBe(405);
  });
});
