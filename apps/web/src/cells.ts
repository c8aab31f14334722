import { getJson, interruptCell } from "./api";
import { append, h, replaceChildren } from "./dom";
import { bytes, duration, stamp } from "./format";
import type { Cell, DisplayRef } from "./types";

/** One live output event of the daemon's stream (C16). */
export interface OutputEvent {
  execution_id: string;
  seq: number;
  stream: string;
  text: string;
  dropped_bytes: number;
}

/** A live display event of the daemon's stream (C20). */
export interface DisplayEvent {
  execution_id: string;
  display: DisplayRef;
}

/**
 * One display: its images inline (served by digest from the log), else its text. A bundle's
 * text/html is never rendered: it is named, and its text/plain shown.
 */
function displayView(d: DisplayRef): HTMLElement {
  const images = d.images.map((img) => {
    const el = h("img", { class: "display-image", title: `${img.mime} ${img.width ?? "?"}×${img.height ?? "?"} · ${bytes(img.bytes)}` });
    el.alt = d.text.slice(0, 200);
    if (img.width) el.width = Math.min(img.width, 900);
    el.src = `/api/images/${encodeURIComponent(img.digest)}`;
    return el;
  });
  const others = d.mimes.filter((m) => m !== "text/plain" && !d.images.some((i) => i.mime === m));
  return h(
    "figure",
    { class: "display", data: { seq: String(d.seq), digest: d.digest } },
    images,
    images.length === 0 || d.text !== "" ? h("pre", { class: "text" }, d.text) : null,
    h("figcaption", {}, `display ${d.seq} · ${d.mimes.join(", ")}`, others.includes("text/html") ? " (text/html is not rendered)" : "", d.omitted ? ` · omitted: ${Object.entries(d.omitted).map(([m, b]) => `${m} ${bytes(b)}`).join(", ")}` : ""),
  );
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
  /** Output and displays that came before their cell's row was on the page, by execution id. */
  private readonly early = new Map<string, Array<OutputEvent | DisplayEvent>>();

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
    const early = this.early.get(cell.id) ?? [];
    this.early.delete(cell.id);
    for (const e of early) this.take(e);
  }

  /** A live display event: shown in its running cell, in order with its output. */
  display(e: DisplayEvent): void {
    this.take(e);
  }

  /** A live output event: appended to its running cell; a cell not on the page yet is fetched first. */
  output(e: OutputEvent): void {
    this.take(e);
  }

  private take(e: OutputEvent | DisplayEvent): void {
    const node = this.nodes.get(e.execution_id);
    if (!node) {
      if (!this.live) return;
      const first = !this.early.has(e.execution_id);
      this.early.set(e.execution_id, [...(this.early.get(e.execution_id) ?? []), e]);
      if (first) void this.refresh(e.execution_id);
      return;
    }
    if (node.dataset.status !== "running") return;
    if ("display" in e) {
      // Shown once: the cell's row, read again when it ends, lists it too.
      if (!node.querySelector(`figure.display[data-seq="${e.display.seq}"]`)) node.querySelector(".displays")!.appendChild(displayView(e.display));
      return;
    }
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
        c.request_id ? h("span", { class: "dim" }, `called by ${c.request_id}`) : h("span", { class: "dim" }, c.origin ? `run by ${c.origin}` : "not a model's cell"),
        button,
        note,
      ),
      h("pre", { class: "code" }, c.code),
      outputView(c),
      h("div", { class: "displays" }, c.displays.map(displayView)),
      c.displays_dropped ? h("p", { class: "note" }, `${c.displays_dropped} more displays were dropped (a cell shows at most 32)`) : null,
      c.error ? h("pre", { class: "error" }, c.error) : null,
    );
  }
}
