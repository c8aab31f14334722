#!/usr/bin/env node
// `pnpm check:packages`: the packages as a stranger gets them. Packs every public package, then,
// in temporary directories outside the repository (removed at the end):
//   1. installs the tarballs into a fresh project, imports each package from ESM, and typechecks a
//      consumer file under moduleResolution node16 and bundler (strict, skipLibCheck off, so a
//      type dependency missing from `dependencies` fails instead of turning into `any`);
//   2. runs publint and `attw --profile esm-only` on every tarball;
//   3. installs @klbr/host globally into a temporary prefix and runs `klbr exec '1+1'` from a
//      directory outside the repository (prints 2), then `klbr mcp` as the README configures it
//      (stdio and Streamable HTTP, driven by the MCP SDK's Client);
//   4. builds the Python wheel from a copy of python/, installs it into a fresh venv, and runs a
//      cell in a worker started from that venv.
// better-sqlite3's native binding is taken from the repository's install when the versions match
// (compiling it takes minutes and is better-sqlite3's business, not ours); otherwise npm builds it.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
const tmp = mkdtempSync(join(tmpdir(), "klbr-pack-"));
const failures = [];

function step(title) {
  process.stdout.write(`\n== ${title} (${((Date.now() - started) / 1000).toFixed(1)}s)\n`);
}

/** Run a command; on failure record it (with its output) and return null. */
function run(file, args, opts = {}) {
  const r = spawnSync(file, args, { encoding: "utf8", maxBuffer: 64 << 20, ...opts, env: { ...process.env, ...opts.env } });
  if (r.status === 0) return r.stdout ?? "";
  failures.push(`${[file, ...args].join(" ")} (in ${opts.cwd ?? process.cwd()}) exited ${r.status ?? r.signal}\n${r.stdout ?? ""}${r.stderr ?? r.error ?? ""}`);
  return null;
}

/** `run`, without blocking: independent steps (linting, the two installs, the wheel) overlap. */
function runAsync(file, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { ...opts, env: { ...process.env, ...opts.env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    child.on("error", (e) => (err += String(e)));
    child.on("close", (code, signal) => {
      if (code === 0) return resolve(out);
      failures.push(`${[file, ...args].join(" ")} (in ${opts.cwd ?? process.cwd()}) exited ${code ?? signal}\n${out}${err}`);
      resolve(null);
    });
  });
}

/** Run `tasks` (functions returning promises) at most `limit` at a time. */
async function pool(limit, tasks) {
  const queue = [...tasks];
  await Promise.all(Array.from({ length: limit }, async () => {
    while (queue.length > 0) await queue.shift()();
  }));
}

function must(file, args, opts = {}) {
  const out = run(file, args, opts);
  if (out === null) finish();
  return out;
}

function finish() {
  rmSync(tmp, { recursive: true, force: true });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (failures.length > 0) {
    process.stderr.write(`\ncheck:packages: ${failures.length} failure(s) in ${seconds}s\n\n${failures.join("\n\n")}\n`);
    process.exit(1);
  }
  process.stdout.write(`\ncheck:packages: every package installs and works outside the repository (${seconds}s)\n`);
  process.exit(0);
}

process.on("SIGINT", () => {
  rmSync(tmp, { recursive: true, force: true });
  process.exit(130);
});

// ---- pack --------------------------------------------------------------------------------------

const packageDirs = [
  ...readdirSync(join(ROOT, "packages")).map((d) => join(ROOT, "packages", d)),
  join(ROOT, "apps", "host"),
].filter((d) => existsSync(join(d, "package.json")) && !JSON.parse(readFileSync(join(d, "package.json"), "utf8")).private);
const packages = packageDirs.map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }));

step("build (turbo, cached when unchanged)");
must("pnpm", ["exec", "turbo", "run", "build", "--output-logs=errors-only"], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });

step(`pack ${packages.length} packages`);
const tarballDir = join(tmp, "tarballs");
mkdirSync(tarballDir);
for (const p of packages) {
  must("pnpm", ["pack", "--pack-destination", tarballDir], { cwd: p.dir });
}
const tarballs = readdirSync(tarballDir).map((f) => join(tarballDir, f));
for (const p of packages) {
  const file = `${p.manifest.name.replace("@", "").replace("/", "-")}-${p.manifest.version}.tgz`;
  p.tarball = join(tarballDir, file);
  if (!existsSync(p.tarball)) failures.push(`${p.manifest.name}: no tarball ${file} after pnpm pack`);
}
if (failures.length) finish();

// ---- lint the tarballs --------------------------------------------------------------------------

const bin = (name) => join(ROOT, "node_modules", ".bin", name);
/** publint and attw --profile esm-only on every tarball. */
async function lintTarballs() {
  await pool(3, packages.flatMap((p) => [
    async () => {
      if ((await runAsync(bin("publint"), ["run", p.tarball, "--strict"], { cwd: tmp })) !== null) process.stdout.write(`publint ${p.manifest.name}: ok\n`);
    },
    async () => {
      const ok = await runAsync(bin("attw"), [p.tarball, "--profile", "esm-only", "--format", "table-flipped", "--no-emoji"], { cwd: tmp });
      if (ok !== null) process.stdout.write(`attw --profile esm-only ${p.manifest.name}: ok\n`);
    },
  ]));
}

// ---- install into a fresh project ---------------------------------------------------------------

const repoRequire = createRequire(join(ROOT, "apps", "host", "package.json"));
const sqliteDir = dirname(repoRequire.resolve("better-sqlite3/package.json"));
const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, "package.json"), "utf8")).version;

/** Give every better-sqlite3 under `dir` the repository's compiled binding, or let npm build it. */
function provisionSqlite(dir) {
  const found = [];
  const walk = (d, depth) => {
    if (depth > 8 || !existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const full = join(d, e.name);
      if (e.name === "better-sqlite3" && basename(d) === "node_modules" && existsSync(join(full, "package.json"))) found.push(full);
      else if (e.name === "node_modules" || e.name.startsWith("@") || basename(d) === "node_modules" || d.includes("node_modules/@")) walk(full, depth + 1);
    }
  };
  walk(dir, 0);
  for (const target of found) {
    const version = JSON.parse(readFileSync(join(target, "package.json"), "utf8")).version;
    if (version === sqliteVersion) cpSync(join(sqliteDir, "build"), join(target, "build"), { recursive: true });
    else {
      process.stdout.write(`better-sqlite3 ${version} differs from the repository's ${sqliteVersion}: npm rebuilds it (minutes)\n`);
      must("npm", ["rebuild", "better-sqlite3"], { cwd: dirname(dirname(target)) });
    }
  }
  return found.length;
}

const names = packages.map((p) => p.manifest.name);
// --prefer-offline: what npm's cache holds is not revalidated (the registry is slow from CI).
// A fetch that stalls on an open connection (seen: an install idle 13 minutes on one socket to the
// registry mirror) is cut after 30 s and asked again, instead of npm's 5 minutes per try.
const npmFlags = ["--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", "--fetch-timeout=30000", "--fetch-retries=5", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=10000"];
const say = (line) => process.stdout.write(`${line} (${((Date.now() - started) / 1000).toFixed(1)}s)\n`);

/** The tarballs in a fresh project: import each from ESM, typecheck a consumer under node16 and bundler. */
async function consumerProject() {
  const consumer = join(tmp, "consumer");
  mkdirSync(consumer);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "klbr-consumer", private: true, type: "module" }, null, 2));
  if ((await runAsync("npm", ["install", ...npmFlags, ...tarballs], { cwd: consumer })) === null) return;
  provisionSqlite(join(consumer, "node_modules"));
  say("npm install of the tarballs into a fresh project: ok");
  writeFileSync(
    join(consumer, "import-all.mjs"),
    `for (const name of ${JSON.stringify(names)}) {\n  const m = await import(name);\n  if (Object.keys(m).length === 0) throw new Error(name + " exports nothing");\n  console.log("import " + name + ": " + Object.keys(m).length + " exports");\n}\n`,
  );
  const imported = await runAsync(process.execPath, ["import-all.mjs"], { cwd: consumer });
  if (imported !== null) process.stdout.write(imported);
  const probes = names.map((name, i) => `import * as p${i} from "${name}";`).join("\n");
  const notAny = names.map((_, i) => `const t${i}: NoAnyExport<typeof p${i}> = p${i};\nvoid t${i};`).join("\n");
  writeFileSync(
    join(consumer, "consumer.ts"),
    `${probes}
// Every export must have a real type: a type dependency missing from a package's dependencies
// would make it (or what it refers to) \`any\` here.
type IsAny<T> = 0 extends 1 & T ? true : false;
type NoAnyExport<M> = { [K in keyof M]: IsAny<M[K]> extends true ? never : M[K] };
${notAny}
import { encodeFrame } from "@klbr/frame";
import { openActivationStore } from "@klbr/activation";
import { Host } from "@klbr/host";
const frame: Uint8Array = encodeFrame({ ok: 1 });
type Db = Parameters<typeof openActivationStore>[0];
const dbIsTyped: IsAny<Db> = false;
const started: Promise<Host> = Host.start({ dataDir: "/nonexistent" });
void frame, void dbIsTyped, void started;
`,
  );
  // The repository's TypeScript and @types/node (a consumer brings its own); skipLibCheck as most
  // projects set it (drizzle's own declarations do not pass without it), so the checks above that
  // no export is \`any\` are what catch a type dependency left out of a package's dependencies.
  const base = { strict: true, skipLibCheck: true, noEmit: true, target: "es2022", types: ["node"], typeRoots: [join(ROOT, "node_modules", "@types")], lib: ["es2023"] };
  const configs = { node16: { ...base, module: "node16", moduleResolution: "node16" }, bundler: { ...base, module: "esnext", moduleResolution: "bundler" } };
  await Promise.all(Object.entries(configs).map(async ([name, compilerOptions]) => {
    writeFileSync(join(consumer, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }, null, 2));
    const ok = await runAsync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", `tsconfig.${name}.json`], { cwd: consumer });
    if (ok !== null) say(`tsc consumer (moduleResolution ${name}): ok`);
  }));
}

const elsewhere = join(tmp, "elsewhere");
mkdirSync(elsewhere);
const prefix = join(tmp, "prefix");
const klbr = join(prefix, "bin", "klbr");
// The host's bytecode of the runtime (runtime/bytecode.ts) goes to a cache of this check's own.
const bytecodeCache = join(tmp, "bytecode");
const env = { ...process.env, KLBR_DATA_DIR: join(tmp, "data"), KLBR_PYTHON_PATH: "", KLBR_BYTECODE_CACHE: bytecodeCache, PATH: `${join(prefix, "bin")}:${process.env.PATH}` };
delete env.INIT_CWD;
delete env.KLBR_PYTHON;

/** @klbr/host installed globally into a temporary prefix; `klbr exec '1+1'` from outside the repository. */
async function globalHost() {
  if ((await runAsync("npm", ["install", "--global", "--prefix", prefix, ...npmFlags, ...tarballs], { cwd: tmp })) === null) return false;
  provisionSqlite(join(prefix, "lib", "node_modules"));
  const version = await runAsync(klbr, ["--version"], { cwd: elsewhere, env });
  if (version !== null && version.trim() !== packages.find((p) => p.manifest.name === "@klbr/host").manifest.version) failures.push(`klbr --version printed ${JSON.stringify(version)}`);
  const two = await runAsync(klbr, ["exec", "1+1"], { cwd: elsewhere, env });
  if (two === "2\n") say("npm i -g, then klbr exec '1+1' outside the repository -> 2");
  else if (two !== null) failures.push(`klbr exec '1+1' printed ${JSON.stringify(two)}, not "2\\n"`);
  const webAssets = join(prefix, "lib", "node_modules", "@klbr", "host", "web-assets");
  // C23: the web view's front end ships inside @klbr/host (no CDN, nothing fetched at run time).
  for (const file of ["app.js", "app.css"]) if (!existsSync(join(webAssets, file))) failures.push(`@klbr/host was installed without its web view's ${file} (web-assets/)`);
  const shipped = join(prefix, "lib", "node_modules", "@klbr", "host", "python");
  const where = await runAsync(klbr, ["exec", originOf("klbr", shipped)], { cwd: elsewhere, env });
  if (where !== null && !where.includes("from the runtime dir")) {
    failures.push(`the worker did not run the runtime shipped in @klbr/host: ${where.trim()}`);
  } else if (where !== null) say(`a worker of the global host ran the runtime shipped in @klbr/host: ${where.trim()}`);
  await mcpAsConfigured();
  return true;
}

/**
 * The README's MCP client configurations as printed, driven by the TypeScript SDK's own Client (the
 * repository's copy, not the one inside @klbr/host) as a new user's MCP client would:
 *   - stdio: `{"command": "klbr", "args": ["mcp"]}`, in the environment the SDK gives a server it
 *     starts (HOME, PATH, USER, ...: nothing of ours), with HOME a fresh one, so the data directory
 *     is the default under it;
 *   - Streamable HTTP: `klbr mcp --http 127.0.0.1:0`, its printed URL and token as the README's
 *     `"url"` and `"Authorization": "Bearer <token>"`.
 * Both list the three tools and keep a namespace across calls (x = 41, then x + 1 -> 42). The first
 * starts the daemon; the second uses it. Stopped here afterwards (it outlives its clients by design).
 */
async function mcpAsConfigured() {
  const sdk = (path) => import(pathToFileURL(repoRequire.resolve(`@modelcontextprotocol/sdk/${path}`)).href);
  const [{ Client }, { StdioClientTransport, getDefaultEnvironment }, { StreamableHTTPClientTransport }] = await Promise.all([
    sdk("client/index.js"),
    sdk("client/stdio.js"),
    sdk("client/streamableHttp.js"),
  ]);
  const home = join(tmp, "new-user-home");
  mkdirSync(home);
  const userEnv = { ...getDefaultEnvironment(), HOME: home, PATH: env.PATH };
  // env-paths' data directory for "klbr" on Linux (XDG_DATA_HOME is not in the SDK's environment).
  const dataDir = join(home, ".local", "share", "klbr");
  const textOf = (result) => (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
  /** A connected client: its three tools, then x = 41 and x + 1 in two calls; null when all held. */
  const exercise = async (client, how) => {
    const tools = (await client.listTools()).tools.map((t) => t.name).join(",");
    if (tools !== "python,sessions,session_log") return `${how}: tools/list gave ${tools}`;
    const first = await client.callTool({ name: "python", arguments: { code: "x = 41" } });
    const second = await client.callTool({ name: "python", arguments: { code: "x + 1" } });
    if (first.isError || second.isError || !/\n42\n$/.test(textOf(second))) return `${how}: x = 41 then x + 1 answered ${JSON.stringify([first, second])}`;
    say(`npm i -g, then ${how}: tools ${tools}; x = 41, x + 1 -> ${JSON.stringify(textOf(second))}`);
    return null;
  };
  const within = (ms, what, promise) => Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000}s`)), ms).unref())]);
  let http;
  let stderr = "";
  try {
    const stdio = new Client({ name: "check-packages", version: "0" });
    const transport = new StdioClientTransport({ command: "klbr", args: ["mcp"], cwd: elsewhere, env: userEnv, stderr: "pipe" });
    transport.stderr?.on("data", (c) => (stderr += c));
    try {
      await within(120_000, "klbr mcp over stdio", stdio.connect(transport));
      const problem = await within(120_000, "klbr mcp over stdio", exercise(stdio, `an MCP client's {"command": "klbr", "args": ["mcp"]}`));
      if (problem) failures.push(problem);
    } finally {
      await stdio.close();
    }
    http = spawn("klbr", ["mcp", "--http", "127.0.0.1:0"], { cwd: elsewhere, env: userEnv, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    http.stderr.on("data", (c) => (stderr += c));
    const printed = await within(60_000, "klbr mcp --http", new Promise((resolve, reject) => {
      http.stdout.on("data", (c) => {
        out += c;
        const url = /serving (http:\/\/\S+)/.exec(out)?.[1];
        const token = /token (\S+)\n/.exec(out)?.[1];
        if (url && token) resolve({ url, token });
      });
      http.once("exit", (code) => reject(new Error(`klbr mcp --http exited ${code}: ${out}`)));
    }));
    const viaHttp = new Client({ name: "check-packages-http", version: "0" });
    await viaHttp.connect(new StreamableHTTPClientTransport(new URL(printed.url), { requestInit: { headers: { Authorization: `Bearer ${printed.token}` } } }));
    try {
      const problem = await within(120_000, "klbr mcp --http", exercise(viaHttp, `an MCP client's {"type": "http", "url": "${printed.url}", "headers": {"Authorization": "Bearer <token>"}}`));
      if (problem) failures.push(problem);
    } finally {
      await viaHttp.close();
    }
  } catch (error) {
    failures.push(`klbr mcp as the README configures it: ${error.message}\n${stderr}`);
  } finally {
    if (http && http.exitCode === null) {
      http.kill("SIGTERM");
      await new Promise((r) => (http.exitCode !== null ? r() : http.once("exit", r)));
    }
    // The daemon klbr mcp started outlives it by design: stop it before the directory goes.
    const pidFile = join(dataDir, "klbr.lock.pid");
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").trim()) : 0;
    if (pid > 0) {
      try {
        process.kill(pid, "SIGTERM");
        for (let i = 0; i < 200; i++) {
          process.kill(pid, 0);
          await new Promise((r) => setTimeout(r, 50));
        }
      } catch {
        // gone
      }
    } else failures.push(`klbr mcp started no daemon in the default data directory ${dataDir}:\n${stderr}`);
  }
}

/**
 * A cell saying where `module` (klbr or klbr.worker) came from: "from the runtime dir" when it was
 * imported from `root`, or from the host's bytecode zip (runtime/bytecode.ts) in this check's own
 * cache whose klbr sources are exactly root's; anything else is named.
 */
function originOf(module, root) {
  return [
    `import os, zipfile, ${module} as m`,
    `root, cache = ${JSON.stringify(root)}, ${JSON.stringify(bytecodeCache)}`,
    `archive = getattr(m.__loader__, "archive", None)`,
    `def sources():`,
    `    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(os.path.join(root, "klbr")) for f in fs if f.endswith(".py"))`,
    `def same(z):`,
    `    names = sorted(n for n in z.namelist() if n.endswith(".py"))`,
    `    return names == sources() and all(z.read(n) == open(os.path.join(root, n), "rb").read() for n in names)`,
    `if archive is None:`,
    `    r = "from the runtime dir" if m.__file__.startswith(root + os.sep) else "from " + m.__file__`,
    `else:`,
    `    r = "from the runtime dir, compiled" if archive.startswith(cache + os.sep) and same(zipfile.ZipFile(archive)) else "from a zip that is not the runtime: " + archive`,
    `r`,
  ].join("\n");
}

/** The wheel, built from a copy of python/ and installed into a fresh venv; returns the venv's python and site-packages. */
async function pythonWheel() {
  const pysrc = join(tmp, "pysrc");
  for (const entry of ["klbr", "klbr_hooks", "pyproject.toml", "README.md", "LICENSE"]) {
    cpSync(join(ROOT, "python", entry), join(pysrc, entry), { recursive: true, filter: (src) => !src.includes("__pycache__") });
  }
  const venv = join(tmp, "venv");
  if ((await runAsync("python3", ["-m", "venv", venv])) === null) return null;
  const pip = join(venv, "bin", "pip");
  if ((await runAsync(pip, ["wheel", "--quiet", "--no-deps", "--wheel-dir", join(tmp, "wheel"), pysrc], { cwd: tmp })) === null) return null;
  const wheel = readdirSync(join(tmp, "wheel")).find((f) => f.endsWith(".whl"));
  if ((await runAsync(pip, ["install", "--quiet", "--no-deps", join(tmp, "wheel", wheel)], { cwd: tmp })) === null) return null;
  const python = join(venv, "bin", "python");
  const site = (await runAsync(python, ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], { cwd: tmp }))?.trim();
  if (!site) return null;
  const distInfo = readdirSync(site).find((d) => d.startsWith("klbr-") && d.endsWith(".dist-info"));
  for (const file of ["klbr/worker/__main__.py", "klbr_hooks/manifest.json", `${distInfo}/licenses/LICENSE`]) {
    if (!existsSync(join(site, file))) failures.push(`the wheel ${wheel} did not install ${file}`);
  }
  say(`pip install ${wheel} into a fresh venv: ok`);
  return { python, site };
}

/** A cell in a worker started from the wheel's venv (KLBR_PYTHON_PATH names its site-packages, so the
 * default behaviour source comes from there too, beside the bytecode pip compiled: the pristine copy's case). */
async function workerFromWheel(wheel) {
  const wheelEnv = { ...env, KLBR_DATA_DIR: join(tmp, "data-wheel"), KLBR_PYTHON: wheel.python, KLBR_PYTHON_PATH: wheel.site };
  const out = await runAsync(klbr, ["exec", originOf("klbr.worker", wheel.site)], { cwd: elsewhere, env: wheelEnv });
  if (out === null) return;
  if (out.includes("from the runtime dir")) say(`a worker from the wheel ran a cell: ${out.trim()}`);
  else failures.push(`the worker did not run from the wheel's venv: ${out}`);
}

step("in parallel: publint + attw, a fresh project, a global install, the Python wheel");
await Promise.all([
  lintTarballs(),
  consumerProject(),
  (async () => {
    const [installed, wheel] = await Promise.all([globalHost(), pythonWheel()]);
    if (installed && wheel) await workerFromWheel(wheel);
  })(),
]);
process.stdout.write(`(under ${tmp}, removed now)\n`);

finish();
