import { h, svg } from "./dom";
import { count } from "./format";
import type { RequestSummary } from "./types";

/**
 * Cache read vs input per request (C23): a pair of bars per request of the page, cache reads beside
 * plain input (the prompt less its cache reads and writes). A request whose route reported no
 * usage has no bars: absent stays absent.
 */
export function usageChart(requests: RequestSummary[]): HTMLElement {
  const rows = requests.map((r) => {
    const u = r.usage;
    const read = u?.cached_prompt_tokens ?? null;
    const input = u ? (u.uncached_prompt_tokens ?? (u.prompt_tokens === undefined ? null : Math.max(0, u.prompt_tokens - (read ?? 0) - (u.cache_write_tokens ?? 0)))) : null;
    return { id: r.id, read, input };
  });
  const max = Math.max(1, ...rows.map((r) => Math.max(r.read ?? 0, r.input ?? 0)));
  const width = 640;
  const height = 120;
  const step = rows.length === 0 ? width : width / rows.length;
  const bar = Math.max(1, Math.min(12, step / 2 - 1));
  const bars: SVGElement[] = [];
  rows.forEach((r, i) => {
    const x = i * step;
    for (const [k, value, dx] of [["read", r.read, 0], ["input", r.input, bar]] as const) {
      if (value === null) continue;
      const hgt = Math.max(value > 0 ? 1 : 0, (value / max) * (height - 10));
      bars.push(svg("rect", { class: `bar ${k}`, x: x + dx, y: height - hgt, width: bar, height: hgt }, svg("title", {}, `${r.id}: ${k === "read" ? "cache read" : "input"} ${count(value)} tokens`)));
    }
  });
  const chart = svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "cache read vs input tokens per request" }, ...bars);
  return h(
    "figure",
    { class: "usage-chart" },
    chart,
    h("figcaption", {}, h("span", { class: "key read" }, "cache read"), " vs ", h("span", { class: "key input" }, "input"), ` tokens per request (this page, max ${count(max)})`),
  );
}
