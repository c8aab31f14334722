// The web view's entry: the server put the first view's data in the page; render it.
import { renderSession } from "./session-page";
import { renderSessions } from "./sessions-page";
import type { SessionData, SessionsData } from "./types";

const data = JSON.parse(document.getElementById("klbr-data")!.textContent!) as SessionsData | SessionData;
const root = document.getElementById("app")!;
if (data.page === "sessions") renderSessions(root, data);
else renderSession(root, data);
document.body.dataset.rendered = "1";
