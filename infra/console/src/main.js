// The operator console: pages routed by the URL's hash, every action a call of the
// public API (docs/console.md).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { html } from "./ui.js";
import { makeApi } from "./api.js";
import { loadConfig, startSession } from "./session.js";
import { BansPage } from "./bans.js";
import { BoardPage, BoardsPage } from "./boards.js";
import { FindPlayerPage, PlayerPage } from "./players.js";
import { AuditPage, CachePage, FamilyForm, IngestPage } from "./ops.js";
import { OverviewPage } from "./overview.js";
import { ReviewPage } from "./review.js";
import { TournamentPage, TournamentsPage } from "./tournaments.js";
import { ROLES } from "./session.js";

const NAV = [["#/overview", "Overview"], ["#/boards", "Boards"], ["#/players", "Players"], ["#/review", "Review"], ["#/bans", "Bans"], ["#/audit", "Audit"],
  ["#/ingest", "Ingest"], ["#/tournaments", "Tournaments"], ["#/cache", "Cache"]];

function useHash() {
  const [hash, setHash] = useState(location.hash || "#/boards");
  useEffect(() => {
    const on = () => setHash(location.hash || "#/boards");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

function Page({ api, hash, go }) {
  const [, where, id] = hash.split("/").map(decodeURIComponent);
  if (where === "boards" && id) return html`<${BoardPage} key=${id} api=${api} lb=${id} />`;
  if (where === "players" && id) return html`<${PlayerPage} key=${id} api=${api} p=${id} />`;
  if (where === "players") return html`<${FindPlayerPage} api=${api} go=${go} />`;
  if (where === "overview") return html`<${OverviewPage} key=${id} api=${api} game=${id} />`;
  if (where === "review") return html`<${ReviewPage} key=${id} api=${api} game=${id} />`;
  if (where === "tournaments" && id) return html`<${TournamentPage} key=${id} api=${api} id=${id} />`;
  if (where === "bans") return html`<${BansPage} key=${id} api=${api} game=${id} go=${go} />`;
  if (where === "audit") return html`<${AuditPage} api=${api} />`;
  if (where === "ingest") return html`<${IngestPage} api=${api} />`;
  if (where === "tournaments") return html`<${TournamentsPage} api=${api} go=${go} />`;
  if (where === "cache") return html`<${CachePage} api=${api} />`;
  return html`<${BoardsPage} api=${api} go=${go} />${api.writes && html`<${FamilyForm} api=${api} />`}`;
}

function Console({ api, session }) {
  const hash = useHash();
  const [who, setWho] = useState(session.who);
  const [role, setRole] = useState(session.role);
  const go = (h) => { location.hash = h; };
  return html`<header>
      <h1>Leaderboards</h1>
      <nav>${NAV.map(([h, label]) => html`<a href=${h} class=${hash.startsWith(h) ? "here" : ""}>${label}</a>`)}</nav>
      <div class="who">${session.rename
        ? html`<input id="operator" value=${who} onChange=${(e) => { session.rename(e.target.value); setWho(session.who); }} />
            ${" as "}<select id="role" value=${role} onChange=${(e) => { session.setRole(e.target.value); setRole(session.role); }}>
              ${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}</select> (local key)`
        : html`signed in as <b id="operator">${who}</b> (<span id="role">${role}</span>) <button class="plain" onClick=${() => session.signOut()}>Sign out</button>`}</div>
    </header>
    <main key=${role}><${Page} api=${api} hash=${hash} go=${go} /></main>`;
}

async function start() {
  const root = document.getElementById("app");
  try {
    const config = await loadConfig();
    const session = await startSession(config);
    if (!session) return; // on the way to the sign-in page
    root.textContent = "";
    render(html`<${Console} api=${makeApi(config, session)} session=${session} />`, root);
  } catch (e) {
    root.textContent = `The console could not start: ${e.message}`;
  }
}

start();
