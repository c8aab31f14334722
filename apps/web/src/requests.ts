import { getJson } from "./api";
import { h, replaceChildren, type Child } from "./dom";
import { bytes, count, duration, percent, stamp, usd } from "./format";
import type { Message, RequestSummary, RequestView } from "./types";

/** The usage figures of a request as the log holds them; a count the route did not send shows as absent. */
function usageLine(r: RequestSummary): HTMLElement {
  const u = r.usage;
  if (!u) return h("span", { class: "usage absent" }, "usage: not reported by the route");
  const item = (label: string, key: string, value: number | undefined) => (value === undefined ? null : h("span", { class: "figure", data: { usage: key } }, `${label} `, h("b", {}, count(value))));
  return h(
    "span",
    { class: "usage" },
    item("input", "prompt_tokens", u.prompt_tokens),
    item("uncached", "uncached_prompt_tokens", u.uncached_prompt_tokens),
    item("output", "completion_tokens", u.completion_tokens),
    item("cache read", "cached_prompt_tokens", u.cached_prompt_tokens),
    item("cache write", "cache_write_tokens", u.cache_write_tokens),
    r.cache_share === null ? null : h("span", { class: "figure", data: { usage: "cache_share" } }, "cache share ", h("b", {}, percent(r.cache_share))),
    h("span", { class: "figure cost", title: r.cost?.formula ?? "no price for this route in routes.json: no cost" }, "cost ", h("b", {}, r.cost ? usd(r.cost.usd) : "–")),
  );
}

function callView(call: { id: string; name: string; arguments: string }): HTMLElement {
  let code: string | null = null;
  try {
    const args = JSON.parse(call.arguments) as { code?: unknown };
    if (typeof args.code === "string") code = args.code;
  } catch {
    /* shown raw below */
  }
  return h("div", { class: "call" }, h("div", { class: "label" }, `tool call ${call.name} · ${call.id}`), h("pre", { class: "code" }, code ?? call.arguments));
}

function messageView(m: Message, i: number): HTMLElement {
  const body: Child[] = [];
  if (m.text !== "") body.push(h("pre", { class: "text" }, m.text));
  if (m.role === "assistant") body.push(m.calls.map(callView));
  const label = m.role === "tool" ? `tool result · ${m.call_id}` : m.role;
  return h("div", { class: `message ${m.role}`, data: { index: String(i) } }, h("div", { class: "label" }, label), body);
}

/** A request opened: what the model read (messages, calls, results), its header pin and observations. */
function requestDetail(view: RequestView): HTMLElement {
  return h(
    "div",
    { class: "request-detail" },
    h(
      "p",
      { class: "meta" },
      `header pin #${view.header.record_id} `,
      h("span", { class: "mono", title: view.header.digest }, view.header.digest.slice(0, 19)),
      view.header.reason ? ` (${view.header.reason})` : "",
      view.frontier ? ` · from frontier ${view.frontier.id} (covers through #${view.frontier.covers_through})` : " · from the start",
      ` · records through #${view.through_seq} · ${view.messages.length} messages (${view.api})`,
    ),
    view.observations.length === 0
      ? null
      : h("div", { class: "observations" }, h("div", { class: "label" }, `header revisions observed: ${view.observations.length}`), view.observations.map((o) => h("pre", { class: "text" }, `${stamp(o.observed_at_ms)} ${o.digest.slice(0, 19)} ${JSON.stringify(o.change)}`))),
    h("div", { class: "messages" }, view.messages.map(messageView)),
  );
}

function requestRow(r: RequestSummary): HTMLElement {
  const detail = h("div", { class: "detail" }, h("p", { class: "loading" }, "loading what the model read…"));
  let loaded = false;
  const el = h(
    "details",
    {
      class: `request ${r.status}`,
      data: { request: r.id },
      ontoggle: () => {
        if (loaded || !el.open) return;
        loaded = true;
        getJson<RequestView>(`/api/requests/${encodeURIComponent(r.id)}`).then(
          (view) => replaceChildren(detail, requestDetail(view)),
          (error: Error) => replaceChildren(detail, h("p", { class: "error" }, error.message)),
        );
      },
    },
    h(
      "summary",
      {},
      h("span", { class: "when" }, stamp(r.started_at_ms)),
      h("span", { class: "mono" }, r.id),
      h("span", { class: `badge ${r.status}` }, r.status),
      h("span", {}, `${r.route} · ${r.model}${r.response_model && r.response_model !== r.model ? ` → ${r.response_model}` : ""}`),
      h("span", { class: "dim" }, `${duration(r.ended_at_ms === null ? null : r.ended_at_ms - r.started_at_ms)} · ${bytes(r.body_bytes)} (${bytes(r.shared_prefix_bytes)} shared)`),
      usageLine(r),
    ),
    r.error ? h("p", { class: "error" }, `${r.error.code}: ${r.error.message}`) : null,
    r.reply
      ? h("div", { class: "reply" }, h("div", { class: "label" }, `reply${r.reply.stop ? ` (${r.reply.stop})` : ""}`), r.reply.text ? h("pre", { class: "text" }, r.reply.text) : null, r.reply.calls.map(callView))
      : null,
    r.cost ? h("p", { class: "formula" }, "cost = ", h("span", { class: "mono" }, r.cost.formula)) : null,
    detail,
  );
  return el;
}

/** A page of requests grouped by the turn that made them, in order. */
export function requestsView(requests: RequestSummary[]): HTMLElement {
  const turns: Array<{ id: string; items: RequestSummary[] }> = [];
  for (const r of requests) {
    const last = turns.at(-1);
    if (last && last.id === r.turn_id) last.items.push(r);
    else turns.push({ id: r.turn_id, items: [r] });
  }
  if (turns.length === 0) return h("p", { class: "empty" }, "No model requests in this session (its cells came from klbr exec or a surface).");
  return h(
    "div",
    { class: "turns" },
    turns.map((t) => h("section", { class: "turn", data: { turn: t.id } }, h("h3", {}, `turn ${t.id}`, h("span", { class: "dim" }, ` · ${t.items.length} request${t.items.length === 1 ? "" : "s"}`)), t.items.map(requestRow))),
  );
}
