import { getJson, interruptCell } from "./api";
import { append, h, replaceChildren } from "./dom";
import { bytes, duration, stamp } from "./format";
import type { Cell } from "./types";

/** One live output event of the daemon's stream (C16). */
export interface OutputEvent {
  execution_id: string;
  seq: number;
  stream: string;
  text: string;
  dropped_bytes: number;
}

function outputView(cell: Cell): HTMLElement {
  const pre = h("pre", { class: "output" });
  for (const o of cell.output) append(pre, h("span", { class: o.stream }, o.text));
  if (cell.truncated_bytes) append(pre, h("span", { class: "note" }, `\n[${bytes(cell.truncated_bytes)} of output cut]`));
  return pre;
}

/** The cells of a page, kept current from the live stream. */
export class CellsView {
  readonly element = h("div", { class: "cells" });
  private readonly nodes = new Map<string, HTMLElement>();
  /** Output that came before its cell's row was on the page, by execution id. */
  private readonly early = new Map<string, OutputEvent[]>();

  /** `live`: this is the newest page, where new cells appear. */
  constructor(cells: Cell[], private readonly live: boolean) {
    if (cells.length === 0) append(this.element, h("p", { class: "empty" }, "No cells yet."));
    for (const c of cells) this.put(c);
  }

  /** Show a cell (new, or its newer state in place). */
  put(cell: Cell): void {
    const node = this.render(cell);
    const old = this.nodes.get(cell.id);
    if (old) old.replaceWith(node);
    else {
      this.element.querySelector(".empty")?.remove();
      this.element.appendChild(node);
    }
    this.nodes.set(cell.id, node);
    for (const e of this.early.get(cell.id) ?? []) this.output(e);
    this.early.delete(cell.id);
  }

  /** A live output event: appended to its running cell; a cell not on the page yet is fetched first. */
  output(e: OutputEvent): void {
    const node = this.nodes.get(e.execution_id);
    if (!node) {
      if (!this.live) return;
      const first = !this.early.has(e.execution_id);
      this.early.set(e.execution_id, [...(this.early.get(e.execution_id) ?? []), e]);
      if (first) void this.refresh(e.execution_id);
      return;
    }
    if (node.dataset.status !== "running") return;
    const pre = node.querySelector("pre.output")!;
    if (e.dropped_bytes > 0) append(pre, h("span", { class: "note" }, `[${bytes(e.dropped_bytes)} not shown: the page fell behind]`));
    append(pre, h("span", { class: e.stream }, e.text));
  }

  /** Read a cell's row again (it started, or ended). */
  async refresh(executionId: string): Promise<void> {
    const cell = await getJson<Cell>(`/api/cells/${encodeURIComponent(executionId)}`).catch(() => null);
    if (cell && (this.nodes.has(cell.id) || this.live)) this.put(cell);
  }

  private render(c: Cell): HTMLElement {
    const running = c.status === "running";
    const note = h("span", { class: "note" });
    const button = running
      ? h(
          "button",
          {
            class: "interrupt",
            type: "button",
            onclick: () => {
              button!.disabled = true;
              replaceChildren(note, "interrupting…");
              interruptCell(c.id).then(
                (r) => replaceChildren(note, r.error ? `${r.error.code}: ${r.error.message}` : "interrupt sent"),
                (error: Error) => replaceChildren(note, error.message),
              );
            },
          },
          "Interrupt",
        )
      : null;
    return h(
      "section",
      { class: `cell ${c.status}`, data: { cell: c.id, status: c.status } },
      h(
        "div",
        { class: "cell-head" },
        h("span", { class: "mono" }, c.id),
        h("span", { class: `badge ${c.status}` }, c.status),
        c.ended_by ? h("span", { class: "dim" }, `ended by ${c.ended_by}`) : null,
        h("span", { class: "dim" }, `${stamp(c.started_at_ms)} · ${running ? "running" : duration(c.ended_at_ms === null ? null : c.ended_at_ms - c.started_at_ms)}`),
        h("span", { class: "figure", data: { field: "cpu_ms" } }, "cpu_ms ", h("b", {}, c.cpu_ms ?? "–")),
        h("span", { class: "figure", data: { field: "peak_rss_bytes" } }, "peak_rss_bytes ", h("b", { title: bytes(c.peak_rss_bytes) }, c.peak_rss_bytes ?? "–")),
        h("span", { class: "dim" }, `generation ${c.generation}`),
        c.request_id ? h("span", { class: "dim" }, `called by ${c.request_id}`) : h("span", { class: "dim" }, "not a model's cell"),
        button,
        note,
      ),
      h("pre", { class: "code" }, c.code),
      outputView(c),
      c.error ? h("pre", { class: "error" }, c.error) : null,
    );
  }
}
