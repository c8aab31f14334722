import { h, replaceChildren } from "./dom";
import { count, stamp, usd } from "./format";
import type { SessionsData } from "./types";

/** The sessions page: one row per session the log knows, newest activity first. */
export function renderSessions(root: HTMLElement, data: SessionsData): void {
  const priced = Object.keys(data.prices).length > 0;
  replaceChildren(
    root,
    h("header", { class: "top" }, h("h1", {}, "klbr sessions"), h("span", { class: data.daemon ? "badge ok" : "badge off" }, data.daemon ? "daemon running" : "no daemon: the log only")),
    data.sessions.length === 0
      ? h("p", { class: "empty" }, "No sessions in this log yet.")
      : h(
          "table",
          { class: "sessions" },
          h("thead", {}, h("tr", {}, ["session", "state", "holder host", "generation", "last activity", "cells", "requests", "tokens in / out / cache read", "cost"].map((t) => h("th", {}, t)))),
          h(
            "tbody",
            {},
            data.sessions.map((s) =>
              h(
                "tr",
                { data: { session: s.session_id } },
                h("td", {}, h("a", { href: `/sessions/${encodeURIComponent(s.session_id)}` }, s.session_id)),
                h("td", {}, h("span", { class: `state ${s.state ?? "unknown"}` }, s.state ?? (data.daemon ? "not started" : "–"))),
                h("td", {}, s.holder_host ?? "–"),
                h("td", { class: "mono" }, s.generation ?? "–"),
                h("td", {}, stamp(s.last_activity_ms)),
                h("td", { class: "num" }, count(s.cells), s.running_cells > 0 ? h("span", { class: "badge busy" }, `${s.running_cells} running`) : null),
                h("td", { class: "num" }, count(s.requests)),
                h("td", { class: "num" }, `${count(s.prompt_tokens)} / ${count(s.completion_tokens)} / ${count(s.cached_prompt_tokens)}`),
                h("td", { class: "num", title: s.cost_by_route.map((r) => `${r.route}: ${r.cost ? r.cost.formula : "no price"}`).join("\n") }, s.cost_usd === null ? "–" : usd(s.cost_usd)),
              ),
            ),
          ),
        ),
    priced ? null : h("p", { class: "note" }, 'No route in routes.json has "prices", so no cost is shown (add "prices": {"input": USD per Mtok, "output": ..., "cache_read": ..., "cache_write": ...} to a route).'),
  );
}
