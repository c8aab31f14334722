import { canonicalMethod } from "@klbr/envelope";
import { behaviorActivate } from "./behavior";
import type { RequestContext } from "./context";
import { ReplyError } from "./errors";
import { evidenceResolve } from "./evidence";
import { frontierSelect } from "./frontier";
import { hooksDescribe, hooksList } from "./hooks";
import { localSend } from "./local";
import { maintenanceAssess, maintenanceOriginate } from "./maintenance";
import { orientationAdopt, orientationCurrent, orientationStage } from "./orientation";
import { peerCancel, peerGet, peerList, peerOpen, peerResult, peerSend, peerStop, peerSubmitResult } from "./peer";
import { remoteCall, remoteCancel, remoteClose, remoteEnsure } from "./remote";
import { runtimeInspect, runtimeInstructions, runtimeWait } from "./runtime";
import { skillsIndex, skillsLoad } from "./skills";
import { workspaceInfo, workspaceRun } from "./workspace";

type Handler = (ctx: RequestContext, params: never) => Promise<unknown>;

/** The host request methods this host serves, one module per family. */
export const HANDLERS: Record<string, Handler> = {
  "local.send": localSend,
  "runtime.wait": runtimeWait,
  "runtime.inspect": runtimeInspect,
  "runtime.instructions": runtimeInstructions,
  "hooks.list": hooksList,
  "hooks.describe": hooksDescribe,
  "skills.index": skillsIndex,
  "skills.load": skillsLoad,
  "workspace.info": workspaceInfo,
  "workspace.run": workspaceRun,
  "evidence.resolve": evidenceResolve,
  "behavior.activate": behaviorActivate,
  "maintenance.originate": maintenanceOriginate,
  "maintenance.assess": maintenanceAssess,
  "orientation.stage": orientationStage,
  "orientation.current": orientationCurrent,
  "orientation.adopt": orientationAdopt,
  "peer.open": peerOpen,
  "peer.send": peerSend,
  "peer.result": peerResult,
  "peer.submit_result": peerSubmitResult,
  "peer.cancel": peerCancel,
  "peer.get": peerGet,
  "peer.list": peerList,
  "peer.stop": peerStop,
  "frontier.select": frontierSelect,
  "remote.ensure": remoteEnsure,
  "remote.call": remoteCall,
  "remote.cancel": remoteCancel,
  "remote.close": remoteClose,
};

/** Families the spec names that this host does not build yet: answered, never faked. */
export const UNSUPPORTED_PREFIXES: string[] = [];

/** The name a method is served and recorded under: an alias (`agents.open`, `peer.message`) becomes its canonical method. */
export function canonicalName(method: string): string {
  return canonicalMethod(method as never);
}

/** Dispatch one validated host request to its handler (aliases to their canonical method's). */
export async function dispatch(ctx: RequestContext, request: { method: string } & Record<string, unknown>): Promise<unknown> {
  const { method: asked, ...params } = request;
  const method = canonicalName(asked);
  const handler = HANDLERS[method];
  if (handler) return handler(ctx, params as never);
  if (UNSUPPORTED_PREFIXES.some((p) => method.startsWith(p))) {
    throw new ReplyError("unsupported", `${method} is not implemented by this host yet`);
  }
  throw new ReplyError("invalid_request", `unknown method ${JSON.stringify(method)}`);
}
