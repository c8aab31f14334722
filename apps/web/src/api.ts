// Requests back to the host that served the page (the cookie goes along; nothing else is reached).

/** GET a JSON view of this host. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: "application/json" }, credentials: "same-origin" });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** Interrupt a running cell: the page's one write (the header proves the page sent it). */
export async function interruptCell(executionId: string): Promise<{ ok?: boolean; error?: { code: string; message: string } }> {
  const res = await fetch(`/api/cells/${encodeURIComponent(executionId)}/interrupt`, { method: "POST", headers: { "x-klbr-web": "interrupt" }, credentials: "same-origin" });
  return (await res.json()) as { ok?: boolean; error?: { code: string; message: string } };
}
