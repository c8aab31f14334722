import { CellsView, type DisplayEvent, type OutputEvent } from "./cells";
import { usageChart } from "./chart";
import { h, replaceChildren, type Child } from "./dom";
import { count, percent, stamp, usd } from "./format";
import { requestsView } from "./requests";
import type { Page, SessionData } from "./types";

/** Links to the other pages of a list (`param` names it in the URL); nothing when it has one page. */
function pager(page: Page<unknown>, param: string, what: string): Child {
  if (page.pages <= 1) return h("p", { class: "dim" }, `${count(page.total)} ${what}`);
  const link = (n: number, label: string) => {
    const url = new URL(location.href);
    url.searchParams.set(param, String(n));
    return h("a", { href: `${url.pathname}${url.search}`, class: "page" }, label);
  };
  return h(
    "nav",
    { class: "pager", data: { pager: param } },
    page.page > 1 ? link(1, "« first") : null,
    page.page > 1 ? link(page.page - 1, "‹ older") : null,
    h("span", {}, ` page ${page.page} of ${page.pages} · ${count(page.total)} ${what} `),
    page.page < page.pages ? link(page.page + 1, "newer ›") : null,
    page.page < page.pages ? link(page.pages, "newest »") : null,
  );
}

function card(label: string, value: Child, field?: string): HTMLElement {
  return h("div", { class: "card", data: field ? { field } : {} }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
}

/** The session page: its figures, requests by turn with usage, cells (live while running), folds. */
export function renderSession(root: HTMLElement, data: SessionData): void {
  const s = data.session;
  const prompt = s.prompt_tokens;
  const cells = new CellsView(data.cells.items, data.cells.page === data.cells.pages);
  const liveBadge = h("span", { class: "badge off" }, data.daemon ? "connecting…" : "no daemon: the log only");
  replaceChildren(
    root,
    h("header", { class: "top" }, h("a", { href: "/", class: "back" }, "← sessions"), h("h1", {}, `session ${s.session_id}`), liveBadge),
    h(
      "div",
      { class: "cards" },
      card("state", s.state ?? "–", "state"),
      card("holder host", s.holder_host ?? "–", "holder"),
      card("generation", h("span", { class: "mono" }, s.generation ?? "–"), "generation"),
      card("last activity", stamp(s.last_activity_ms)),
      card("requests", count(s.requests), "requests"),
      card("tokens in / out", `${count(prompt)} / ${count(s.completion_tokens)}`, "tokens"),
      card("cache read / write", `${count(s.cached_prompt_tokens)} / ${count(s.cache_write_tokens)}`),
      card("cache share", prompt > 0 ? percent(s.cached_prompt_tokens / prompt) : "–"),
      card("cost", s.cost_usd === null ? "–" : usd(s.cost_usd), "cost"),
    ),
    h(
      "details",
      { class: "formulas" },
      h("summary", {}, "how cost is computed"),
      h("p", {}, "cost = (input × price.input + cache_read × price.cache_read + cache_write × price.cache_write + output × price.output) / 1,000,000, with prices in USD per million tokens from routes.json; input is the prompt less its cache reads and writes (or the route's own uncached count). A route without prices, or tokens of a kind it does not price, has no cost."),
      s.cost_by_route.map((r) => h("p", { class: "mono" }, `${r.route} (${count(r.requests)} requests): ${r.cost ? r.cost.formula : "no price, no cost"}`)),
      s.requests_without_usage > 0 ? h("p", {}, `${count(s.requests_without_usage)} requests have no usage (the route reported none): not counted.`) : null,
    ),
    h("h2", {}, "Model requests"),
    usageChart(data.requests.items),
    pager(data.requests, "requests", "requests"),
    requestsView(data.requests.items),
    h("h2", {}, "Cells"),
    pager(data.cells, "cells", "cells"),
    cells.element,
    h("h2", {}, "Folds and frontiers"),
    data.frontiers.length === 0
      ? h("p", { class: "empty" }, "No folds yet.")
      : h(
          "div",
          { class: "frontiers" },
          data.frontiers.map((f) =>
            h(
              "details",
              { class: "frontier", data: { frontier: f.id } },
              h("summary", {}, h("span", { class: "mono" }, f.id), ` · ${f.reason} · covers through #${f.covers_through} · ${stamp(f.created_at_ms)} · ${f.installed_at_ms === null ? "not installed yet" : `installed ${stamp(f.installed_at_ms)}`}`),
              h("pre", { class: "text" }, f.block),
            ),
          ),
        ),
  );
  if (data.daemon) follow(s.session_id, cells, liveBadge);
}

/** The session's live stream: output into running cells, cells re-read when they end. */
function follow(sessionId: string, cells: CellsView, badge: HTMLElement): void {
  const source = new EventSource(`/api/sessions/${encodeURIComponent(sessionId)}/live`);
  const show = (text: string, cls: string) => {
    badge.className = `badge ${cls}`;
    badge.textContent = text;
  };
  source.addEventListener("daemon", (e) => {
    const d = JSON.parse((e as MessageEvent<string>).data) as { live: boolean };
    if (d.live) show("live", "ok");
    else {
      show("not live: the daemon streams no output", "off");
      source.close();
    }
  });
  source.addEventListener("output", (e) => cells.output(JSON.parse((e as MessageEvent<string>).data) as OutputEvent));
  source.addEventListener("display", (e) => cells.display(JSON.parse((e as MessageEvent<string>).data) as DisplayEvent));
  source.addEventListener("execution", (e) => void cells.refresh((JSON.parse((e as MessageEvent<string>).data) as { execution_id: string }).execution_id));
  source.addEventListener("model", (e) => {
    const m = JSON.parse((e as MessageEvent<string>).data) as { phase: string; execution_id?: string };
    if (m.phase === "cell" && m.execution_id) void cells.refresh(m.execution_id);
  });
  source.onerror = () => show("reconnecting…", "off");
}
