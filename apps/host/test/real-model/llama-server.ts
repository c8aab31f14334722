// llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) with SmolLM2-135M-Instruct, as
// `.ci/setup-llama.sh` installs them, started on 127.0.0.1 for the real-model suite (issue 27).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";

/** What the setup script wrote: the venv's interpreter, the GGUF file and the pinned version. */
export interface LlamaInstall {
  python: string;
  model: string;
  version: string;
}

/** Where `.ci/setup-llama.sh` leaves server.json (KLBR_LLAMA_CACHE moves it, as it moves the script's cache). */
export const SERVER_JSON = join(process.env.KLBR_LLAMA_CACHE ?? join(homedir(), ".cache", "klbr-ci", "llama"), "server.json");

/**
 * The installed server, or null when it is not installed. In CI (CI=true) a missing server is an
 * error, never a skip: `.ci/run` installs it before `pnpm test`.
 */
export function findLlama(): LlamaInstall | null {
  const found = existsSync(SERVER_JSON) ? (JSON.parse(readFileSync(SERVER_JSON, "utf8")) as LlamaInstall) : null;
  const usable = found !== null && existsSync(found.python) && existsSync(found.model);
  if (!usable && process.env.CI === "true") {
    throw new Error(`llama.cpp's server is required in CI and is not installed (${SERVER_JSON}): .ci/run runs .ci/setup-llama.sh before pnpm test`);
  }
  if (!usable) process.stderr.write(`real-model suite skipped outside CI: run .ci/setup-llama.sh to install the server (${SERVER_JSON} missing)\n`);
  return usable ? found : null;
}

/** A free loopback port (the server binds it a moment later; nothing else here races for it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A running server. */
export interface LlamaServer {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Everything the server wrote on stdout and stderr, for a failure message. */
  output(): string;
  stop(): Promise<void>;
}

/** The server's settings the suite uses. */
export interface LlamaServerOptions {
  /** `chatml-function-calling` for tool cells; the model's own template (chatml) for fence cells. */
  chatFormat: "chatml" | "chatml-function-calling";
  /** The server's context window, tokens. */
  nCtx: number;
  seed?: number;
}

/** The model name the server answers as (`--model_alias`), which the routes name. */
export const MODEL_ALIAS = "smollm2-135m-instruct";

// Dies with its parent (prctl PR_SET_PDEATHSIG): a test runner killed hard leaves no server behind.
const LAUNCH = "import ctypes, os, signal, sys; ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL); os.execv(sys.executable, [sys.executable, '-m', 'llama_cpp.server', *sys.argv[1:]])";

/**
 * Start the server on a free 127.0.0.1 port and resolve once it says it is listening (uvicorn's
 * "Uvicorn running on" line): an observable event, not a sleep.
 */
export async function startLlamaServer(install: LlamaInstall, options: LlamaServerOptions): Promise<LlamaServer> {
  const port = await freePort();
  const args = [
    "--model", install.model,
    "--model_alias", MODEL_ALIAS,
    "--host", "127.0.0.1",
    "--port", String(port),
    "--n_ctx", String(options.nCtx),
    // One thread: on a shared, loaded machine two ggml threads spin at every barrier waiting for
    // each other, and a 135M model needs no more.
    "--n_threads", "1",
    "--seed", String(options.seed ?? 1234),
    "--chat_format", options.chatFormat,
    "--verbose", "False",
    // By default the server aborts a streaming reply when another request arrives; every request
    // here is answered in full, so a probe or a second client never cuts one short.
    "--interrupt_requests", "False",
  ];
  const child: ChildProcess = spawn(install.python, ["-c", LAUNCH, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.includes("Uvicorn running on")) resolve();
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code, signal) => reject(new Error(`llama.cpp's server exited (${code ?? signal}) before listening:\n${output.slice(-4000)}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
