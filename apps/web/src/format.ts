// How numbers, sizes, times and money read on the page.

/** 12,345. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? "–" : n.toLocaleString("en-US");
}

/** 1.5 MiB. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** 2026-12-06 22:35:49Z. */
export function stamp(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "–";
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

/** 840 ms, 3.2 s, 4 min. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** $0.0123 (four significant digits below a cent). */
export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  if (n === 0) return "$0";
  return n >= 0.01 ? `$${n.toFixed(n >= 100 ? 0 : 2)}` : `$${Number(n.toPrecision(4))}`;
}

/** 93.1%. */
export function percent(share: number | null | undefined): string {
  return share === null || share === undefined ? "–" : `${(100 * share).toFixed(1)}%`;
}
