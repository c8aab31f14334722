import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { parseRoute, parseRoutes, type Route, type RoutesFile } from "@klbr/driver";
import { HostError } from "../errors";

/** Read `<data>/routes.json` (C10); a missing file is no routes. A malformed one is refused naming the file. */
export function readRoutes(path: string): RoutesFile {
  if (!existsSync(path)) return { default: null, routes: [] };
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new HostError("DRIVER_INVALID_ROUTES", `${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseRoutes(value);
}

/** Write the routes file whole (0600, through a temporary file and a rename: never half-written). */
export function writeRoutes(path: string, file: RoutesFile): void {
  const checked = parseRoutes(file);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(checked, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/** Add a route (or replace the one of the same name); the first route becomes the default. */
export function addRoute(path: string, route: unknown, makeDefault = false): RoutesFile {
  const checked: Route = parseRoute(route);
  const file = readRoutes(path);
  const routes = file.routes.filter((r) => r.name !== checked.name).concat(checked);
  const next = { default: makeDefault || file.default === null ? checked.name : file.default, routes };
  writeRoutes(path, next);
  return next;
}

/**
 * Remove a route by name; the default moves to the first route left. Removing the last route
 * removes the file: a routes file names its default (C10), and with no routes there is none.
 */
export function removeRoute(path: string, name: string): RoutesFile {
  const file = readRoutes(path);
  if (!file.routes.some((r) => r.name === name)) throw new HostError("DRIVER_UNKNOWN_ROUTE", `no route named ${JSON.stringify(name)}`);
  const routes = file.routes.filter((r) => r.name !== name);
  if (routes.length === 0) {
    rmSync(path, { force: true });
    return { default: null, routes };
  }
  const next = { default: file.default === name ? routes[0]!.name : file.default, routes };
  writeRoutes(path, next);
  return next;
}
