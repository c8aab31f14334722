// The web view's entry: the server put the first view's data in the page; render it.
import { renderSession } from "./session-page";
import { renderSessions } from "./sessions-page";
import type { PageData } from "./types";

// The token came in the URL `klbr web` printed; the cookie carries it from here: out of the address bar and history.
const here = new URL(location.href);
if (here.searchParams.has("token")) {
  here.searchParams.delete("token");
  history.replaceState(history.state, "", `${here.pathname}${here.search}${here.hash}`);
}

const data = JSON.parse(document.getElementById("klbr-data")!.textContent!) as PageData;
const root = document.getElementById("app")!;
if (data.page === "sessions") renderSessions(root, data);
else renderSession(root, data);
document.body.dataset.rendered = "1";
