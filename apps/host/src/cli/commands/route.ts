import type { Command } from "commander";
import { HostError } from "../../errors";
import { dataLayout } from "../../paths";
import { optionsOf, run, type CommonOptions } from "../command";
import { dataDirOf } from "../target";

interface AddOptions extends CommonOptions {
  api: string;
  baseUrl: string;
  model: string;
  keyEnv?: string;
  contextTokens: string;
  cells: string;
  acceptsRetention?: boolean;
  acceptsOptions?: boolean;
  option?: string[];
  images?: boolean;
  default?: boolean;
  json?: boolean;
}

/** `key=value` options; the value is JSON when it parses as JSON (numbers, booleans, objects), else a string. */
function parseOptions(pairs: string[] = []): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new HostError("CLI_USAGE", `--option needs key=value, got ${JSON.stringify(pair)}`);
    const raw = pair.slice(at + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    options[pair.slice(0, at)] = value;
  }
  return options;
}

/** `klbr route add NAME ...`: write the route into `<data>/routes.json` (C10). The key stays in the environment. */
export async function routeAdd(name: string, opts: AddOptions): Promise<number> {
  if (!/^\d+$/.test(opts.contextTokens)) throw new HostError("CLI_USAGE", `--context-tokens needs an integer, got ${JSON.stringify(opts.contextTokens)}`);
  const { addRoute } = await import("../../runtime/routes-file");
  const route = {
    name,
    api: opts.api,
    base_url: opts.baseUrl,
    model: opts.model,
    api_key_env: opts.keyEnv ?? null,
    context_tokens: Number(opts.contextTokens),
    cells: opts.cells,
    accepts: { prompt_cache_retention: opts.acceptsRetention === true, prompt_cache_options: opts.acceptsOptions === true },
    options: parseOptions(opts.option),
    // C20: the model reads images (each displayed image goes with its result).
    ...(opts.images === true ? { images: true } : {}),
  };
  const file = addRoute(dataLayout(dataDirOf(opts)).routes, route, opts.default === true);
  if (opts.json) process.stdout.write(`${JSON.stringify(file)}\n`);
  else process.stdout.write(`route ${name} saved${file.default === name ? " (default)" : ""}; a running daemon uses it after a restart\n`);
  return 0;
}

/** `klbr route list`: the routes, the default, and whether each key variable is set (never the key). */
export async function routeList(opts: CommonOptions & { json?: boolean }): Promise<number> {
  const { readRoutes } = await import("../../runtime/routes-file");
  const file = readRoutes(dataLayout(dataDirOf(opts)).routes);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(file)}\n`);
    return 0;
  }
  if (file.routes.length === 0) process.stdout.write("no routes (add one with `klbr route add NAME --api chat --base-url URL --model M`)\n");
  for (const r of file.routes) {
    const key = r.api_key_env === null ? "no key" : `key $${r.api_key_env} ${process.env[r.api_key_env] ? "set" : "NOT SET"}`;
    process.stdout.write(`${r.name === file.default ? "*" : " "} ${r.name}  ${r.api}  ${r.model}  ${r.base_url}  ${key}  context ${r.context_tokens}  cells ${r.cells}\n`);
  }
  return 0;
}

/** `klbr route remove NAME`. */
export async function routeRemove(name: string, opts: CommonOptions): Promise<number> {
  const { removeRoute } = await import("../../runtime/routes-file");
  const file = removeRoute(dataLayout(dataDirOf(opts)).routes, name);
  process.stdout.write(`route ${name} removed${file.default ? `; default is ${file.default}` : ""}\n`);
  return 0;
}

/** `klbr route test NAME`: one tiny streamed request; prints the reply and the usage record as the route reported it. */
export async function routeTest(name: string, opts: CommonOptions & { json?: boolean }): Promise<number> {
  const { readRoutes } = await import("../../runtime/routes-file");
  const { assembleMessages, buildRequestBody, callRoute, findRoute, routeKey } = await import("@klbr/driver");
  const route = findRoute(readRoutes(dataLayout(dataDirOf(opts)).routes), name);
  const key = routeKey(route);
  const messages = assembleMessages({
    header: "This is a connectivity test of a klbr route. Answer in one word.\n",
    frontier: null,
    records: [{ seq: 1, kind: "input", event: { source: "operator", received_at_ms: Date.now(), payload: { text: "Reply with the word: ok" } } }],
  });
  const started = Date.now();
  const result = await callRoute({ ...route, cells: "fence" }, buildRequestBody({ ...route, cells: "fence" }, messages), { key });
  const ms = Date.now() - started;
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ route: route.name, reply: result.reply, response_model: result.model, usage: result.usage, retries: result.retries, ms })}\n`);
    return 0;
  }
  process.stdout.write(`route ${route.name}: ${route.api} ${route.model} answered in ${ms} ms (${result.retries} retries)\n`);
  process.stdout.write(`reply: ${JSON.stringify(result.reply.text)}\n`);
  process.stdout.write(`response model: ${result.model ?? "absent (the reply named none)"}\n`);
  process.stdout.write(`usage: ${result.usage ? JSON.stringify({ ...result.usage, raw: undefined }) : "absent (the route reported none)"}\n`);
  return 0;
}

/** Register `klbr route add|list|remove|test`. */
export function register(program: Command): void {
  const route = program.command("route").description("model routes in <data>/routes.json (keys are read from environment variables, never stored)");
  route
    .command("add")
    .description("add or replace a route")
    .argument("<name>", "the route's name")
    .requiredOption("--api <api>", "chat | responses | anthropic")
    .requiredOption("--base-url <url>", "the API base URL (OpenAI-compatible routes end in /v1)")
    .requiredOption("--model <model>", "the model name the route serves")
    .option("--key-env <VAR>", "the environment variable holding the key (none for a local server)")
    .option("--context-tokens <n>", "the model's context window in tokens", "128000")
    .option("--cells <mode>", "tool (a python tool call) | fence (a fenced python block)", "tool")
    .option("--accepts-retention", "the route takes prompt_cache_retention")
    .option("--accepts-options", "the route takes prompt_cache_options")
    .option("-o, --option <key=value...>", "a request option sent with every request (value parsed as JSON when it is JSON)")
    .option("--images", "the model reads images: each image a cell displays goes with its result (C20); without it, only the image line")
    .option("--default", "make it the default route")
    .option("--json", "the routes file as JSON on stdout")
    .action(run(async (cmd, name) => routeAdd(name!, optionsOf(cmd))));
  route.command("list").description("list the routes (* marks the default)").option("--json", "the routes file as JSON")
    .action(run(async (cmd) => routeList(optionsOf(cmd))));
  route.command("remove").description("remove a route").argument("<name>", "the route's name")
    .action(run(async (cmd, name) => routeRemove(name!, optionsOf(cmd))));
  route.command("test").description("send one tiny request and print the usage record").argument("<name>", "the route's name").option("--json", "reply, usage and retries as JSON")
    .action(run(async (cmd, name) => routeTest(name!, optionsOf(cmd))));
}
