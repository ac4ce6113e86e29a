// Tournaments and leagues: the list with each schedule shown as its windows in the
// operator's time zone, a form that defines one (operators only), and a tournament's
// page: its definition, its occurrence and the occurrence's cohorts with their
// standings (each cohort is a board of its own, `t:{tournament}:{occurrence}:c{n}`),
// and a league's settled outcomes beside a changed definition's (its dry run).
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, html } from "./ui.js";
import { seg } from "./api.js";

const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
const LOCAL = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const local = (t) => LOCAL.format(new Date(t));

/** The start of the window after the one that ends at `end` (ms), for a period. */
function after(period, end) {
  const d = new Date(end);
  if (period === "DAILY") d.setUTCDate(d.getUTCDate() + 1);
  else if (period === "WEEKLY") d.setUTCDate(d.getUTCDate() + 7);
  else d.setUTCMonth(d.getUTCMonth() + 1);
  return d.getTime();
}

/** A schedule as its windows: the current occurrence's, and for a recurring one the next two. */
export function Windows({ t }) {
  const o = t.occurrence;
  const start = Date.parse(o.starts_at);
  const end = Date.parse(o.ends_at);
  const next = [];
  if (t.schedule.period) {
    let s = end;
    for (let i = 0; i < 2; i++) {
      const e = after(t.schedule.period, s);
      next.push([s, e]);
      s = e;
    }
  }
  return html`<span class="windows">${t.schedule.period ? `${t.schedule.period.toLowerCase()}: ` : "once: "}
    <span class=${`pill ${o.status}`}>${o.status}</span> ${local(start)} → ${local(end)}
    ${next.length > 0 && html`<span class="muted"> · then ${next.map(([s, e]) => `${local(s)} → ${local(e)}`).join(", ")}</span>`}</span>`;
}

function numberOrNothing(v) {
  const s = String(v ?? "").trim();
  return s === "" ? undefined : /^\d+$/.test(s) ? Number(s) : s;
}

function CreateTournament({ api, created }) {
  return html`<section>
    <h2>Define a tournament</h2>
    <p class="muted">Times are in your time zone (${ZONE}); a recurring schedule's windows are its family period's.</p>
    <${ActionForm} id="create-tournament" label="Create"
      fields=${[
        { name: "tournament_id", label: "Tournament id", placeholder: "weekend-cup" },
        { name: "game", label: "Game" },
        { name: "mode", label: "Mode" },
        { name: "title", label: "Title" },
        { name: "policy", label: "Policy", options: ["BEST", "MIN", "LATEST", "SUM"] },
        { name: "schedule", label: "Schedule", options: ["once", "DAILY", "WEEKLY", "MONTHLY"] },
        { name: "start", label: "Starts (once)", type: "datetime-local" },
        { name: "end", label: "Ends (once)", type: "datetime-local" },
        { name: "cohort_size", label: "Cohort size (empty: one board)" },
        { name: "max_players", label: "Most players (empty: no limit)" },
        { name: "max_attempts", label: "Attempts per player (empty: no limit)" },
        { name: "join_required", label: "Players join first", type: "checkbox", value: true },
      ]}
      submit=${(v) => {
        const stamp = (x) => (x ? new Date(x).toISOString() : x);
        const body = {
          tournament_id: v.tournament_id.trim(), game: v.game.trim(), mode: v.mode.trim(), title: v.title,
          policy: v.policy, join_required: v.join_required,
          schedule: v.schedule === "once" ? { start: stamp(v.start), end: stamp(v.end) } : { period: v.schedule },
        };
        for (const k of ["cohort_size", "max_players", "max_attempts"]) {
          const n = numberOrNothing(v[k]);
          if (n !== undefined) body[k] = n;
        }
        return api.send("POST", "/tournaments", body);
      }}
      done=${(t) => { created(t); return `Tournament ${t.tournament_id} is defined.`; }} />
  </section>`;
}

export function TournamentsPage({ api, go }) {
  const [list, setList] = useState(null);
  const load = () => api.get("/admin/view/tournaments", { limit: 100 }).then(setList);
  useEffect(() => { load(); }, []);
  return html`<section><h2>Tournaments and leagues</h2>
    ${list && !list.ok && html`<${Problem} error=${list.error} />`}
    ${list?.ok && html`<table id="tournaments"><thead><tr><th>Tournament</th><th>Game / mode</th><th>Kind</th><th>Title</th><th>Windows (${ZONE})</th></tr></thead><tbody>
      ${list.data.tournaments.map((t) => html`<tr data-tournament=${t.tournament_id}><td><a href=${`#/tournaments/${t.tournament_id}`}>${t.tournament_id}</a></td>
        <td>${t.game} ${t.mode ?? ""}</td><td>${t.league ? "league" : t.cohort_size ? `cohorts of ${t.cohort_size}` : t.category ?? "open"}</td>
        <td>${t.title}</td><td><${Windows} t=${t} /></td></tr>`)}
    </tbody></table>${list.data.tournaments.length === 0 && html`<p class="muted">No tournament yet.</p>`}`}
  </section>
  ${api.writes && html`<${CreateTournament} api=${api} created=${(t) => { load(); go(`#/tournaments/${t.tournament_id}`); }} />`}`;
}

/** The cohorts of an occurrence with their top 10 (names on every row). */
function Cohorts({ api, t, tick }) {
  const [cohorts, setCohorts] = useState(null);
  useEffect(() => {
    (async () => {
      const found = [];
      // Cohorts are numbered from 0 and filled in order: read until one does not exist.
      for (let n = 0; n < 50; n++) {
        const lb = `${t.occurrence.leaderboard_id}:c${n}`;
        const top = await api.get(`/admin/view/leaderboards/${seg(lb)}/top`, { n: 10 });
        if (!top.ok && top.status === 404) break;
        found.push({ lb, top });
      }
      setCohorts(found);
    })();
  }, [t.tournament_id, tick]);
  if (!t.cohort_size) return html`<p class="muted">Every player on one board: <a href=${`#/boards/${t.occurrence.leaderboard_id}`}>${t.occurrence.leaderboard_id}</a>.</p>`;
  if (!cohorts) return html`<p class="muted">Reading the cohorts...</p>`;
  if (cohorts.length === 0) return html`<p class="muted" id="no-cohorts">No cohort yet: nobody has joined this occurrence.</p>`;
  return html`<div id="cohorts">${cohorts.map(({ lb, top }, n) => html`<div class="cohort" data-cohort=${n}>
    <h3>Cohort ${n} <a class="muted" href=${`#/boards/${lb}`}>${lb}</a></h3>
    ${!top.ok ? html`<${Problem} error=${top.error} />` : html`<table><thead><tr><th>Rank</th><th>Player</th><th>Score</th></tr></thead><tbody>
      ${top.data.entries.map((e) => html`<tr data-player=${e.player_id}><td>${e.rank}</td>
        <td><a href=${`#/players/${e.player_id}`}>${e.display_name ?? e.player_id}</a></td><td class="score">${String(e.score)}</td></tr>`)}
    </tbody></table>${top.data.entries.length === 0 && html`<p class="muted">No result yet.</p>`}`}
  </div>`)}</div>`;
}

/** The key of the occurrence before the one that starts at `start` (ms): `2026-11-27`,
 * `2026-W47` (ISO week) or `2026-10`, as the service names them. */
export function previousKey(period, start) {
  const d = new Date(start);
  const pad = (n) => String(n).padStart(2, "0");
  if (period === "DAILY") {
    d.setUTCDate(d.getUTCDate() - 1);
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  }
  if (period === "MONTHLY") {
    d.setUTCMonth(d.getUTCMonth() - 1);
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`;
  }
  d.setUTCDate(d.getUTCDate() - 7);
  // ISO week: the week's Thursday decides its year.
  const thursday = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 3 - ((d.getUTCDay() + 6) % 7)));
  const jan4 = new Date(Date.UTC(thursday.getUTCFullYear(), 0, 4));
  const week = 1 + Math.round(((thursday - jan4) / 86_400_000 - 3 + ((jan4.getUTCDay() + 6) % 7)) / 7);
  return `${thursday.getUTCFullYear()}-W${pad(week)}`;
}

/** A sealed occurrence's league outcomes: the dry run of a league definition (the
 * current one: what the seal decided), each member whose outcome a changed definition
 * decides otherwise marked. Stores nothing; operators only (it is a POST). */
function LeagueOutcomes({ api, t, changed }) {
  const [occurrence, setOccurrence] = useState(previousKey(t.schedule.period, Date.parse(t.occurrence.starts_at)));
  const [text, setText] = useState(JSON.stringify(t.league, null, 2));
  const [res, setRes] = useState(null);
  async function run() {
    let league;
    try {
      league = JSON.parse(text);
    } catch (e) {
      return setRes({ ok: false, error: { code: "not_json", message: e.message } });
    }
    setRes(await api.send("POST", `/tournaments/${seg(t.tournament_id)}/occurrences/${seg(occurrence.trim())}/league/dry-run`, { league }));
  }
  return html`<section>
    <h2>League outcomes</h2>
    <p class="muted">What the seal decided for each cohort of a sealed occurrence, under the league as it is; change the definition to see whom a change would decide otherwise (nothing is stored).</p>
    <div class="field"><label for="league-occurrence">Occurrence</label>
      <input id="league-occurrence" value=${occurrence} onInput=${(e) => setOccurrence(e.target.value)} /></div>
    <div class="field"><label for="league-text">League (JSON)</label>
      <textarea id="league-text" class="short" value=${text} onInput=${(e) => setText(e.target.value)} /></div>
    <p><button id="league-show" onClick=${run}>Show outcomes</button></p>
    <h3>Apply this league</h3>
    <p class="muted">From the next seal on (the current occurrence's included); the tiers stay as they are.</p>
    <${ActionForm} id="league-apply" label="Apply" fields=${[{ name: "reason", label: "Reason" }]}
      confirm=${() => `Apply the league above to ${t.tournament_id} from its next seal on?`}
      submit=${(v) => {
        try {
          return api.send("PATCH", `/tournaments/${seg(t.tournament_id)}`, { league: JSON.parse(text), reason: v.reason });
        } catch (e) {
          return { ok: false, error: { code: "not_json", message: e.message } };
        }
      }}
      done=${() => { changed(); return "Applied: the next seal decides by it."; }} />
    ${res && !res.ok && html`<${Problem} error=${res.error} />`}
    ${res?.ok && html`<div id="league-outcomes">${res.data.cohorts.map((c) => html`<div class="cohort" data-cohort=${c.cohort}>
      <h3>Cohort ${c.cohort} <span class="muted">${c.tier}</span>${c.differs.length > 0 && html` <span class="pill bad">${c.differs.length} decided otherwise</span>`}</h3>
      <table><thead><tr><th>Rank</th><th>Player</th><th>Tier</th><th>Reward</th></tr></thead><tbody>
        ${c.members.map((m) => html`<tr data-player=${m.player_id ?? ""} data-after=${m.tier_after} class=${c.differs.includes(m.player_id) ? "differs" : ""}>
          <td>${m.rank ?? "-"}</td><td>${m.player_id ? html`<a href=${`#/players/${m.player_id}`}>${m.player_id}</a>` : html`<span class="muted">(erased)</span>`}</td>
          <td>${m.tier_before} → <b>${m.tier_after}</b></td><td>${m.reward ?? "-"}</td></tr>`)}
      </tbody></table></div>`)}
      ${res.data.cohorts.length === 0 && html`<p class="muted">No sealed cohort in ${res.data.occurrence}.</p>`}</div>`}
  </section>`;
}

/** An operator's change of a tournament's texts and caps (`PATCH /tournaments/{t}`):
 * only the fields filled in change; what would move a running occurrence is not here. */
function EditTournament({ api, t, changed }) {
  const number = (v) => (v === "" ? undefined : Number(v));
  return html`<section><h2>Edit</h2>
    <p class="muted">Only what is filled in changes, from now on. The schedule, policy, cohort size and grace would move a running occurrence: define a new tournament for those.</p>
    <${ActionForm} id="edit-tournament" label="Save"
      fields=${[{ name: "title", label: "Title", value: t.title }, { name: "max_attempts", label: "Attempts each", placeholder: String(t.max_attempts ?? "") },
        { name: "max_players", label: "Most players", placeholder: String(t.max_players ?? "") }, { name: "reason", label: "Reason" }]}
      confirm=${(v) => `Change ${t.tournament_id}${v.title !== t.title ? ` (title "${v.title}")` : ""}?`}
      submit=${(v) => api.send("PATCH", `/tournaments/${seg(t.tournament_id)}`, {
        title: v.title === t.title ? undefined : v.title,
        max_attempts: number(v.max_attempts), max_players: number(v.max_players), reason: v.reason })}
      done=${() => { changed(); return "Saved."; }} />
  </section>`;
}

export function TournamentPage({ api, id }) {
  const [t, setT] = useState(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    api.get("/admin/view/tournaments", { limit: 100 }).then((r) => setT(r.ok
      ? { ok: true, data: r.data.tournaments.find((x) => x.tournament_id === id) }
      : r));
  }, [id, tick]);
  if (!t) return html`<p>Loading ${id}...</p>`;
  if (!t.ok) return html`<${Problem} error=${t.error} />`;
  if (!t.data) return html`<p class="bad">No tournament ${id}.</p>`;
  const d = t.data;
  return html`<section>
      <h2>Tournament <span id="tournament-id">${d.tournament_id}</span> <span class="muted">${d.title}</span></h2>
      <dl>
        <dt>Game / mode</dt><dd>${d.game} / ${d.mode}</dd><dt>Policy</dt><dd>${d.policy}</dd>
        <dt>Windows (${ZONE})</dt><dd><${Windows} t=${d} /></dd>
        <dt>Occurrence</dt><dd>${d.occurrence.occurrence}: <a href=${`#/boards/${d.occurrence.leaderboard_id}`}>${d.occurrence.leaderboard_id}</a></dd>
        <dt>Seats</dt><dd>${d.cohort_size ? `cohorts of ${d.cohort_size}` : "one board"}${d.max_players ? `, at most ${d.max_players} players` : ""}${d.max_attempts ? `, ${d.max_attempts} attempts each` : ""}${d.join_required ? ", join first" : ", a first result joins"}</dd>
        ${d.league && html`<dt>League</dt><dd>${d.league.tiers.map((x) => x.id).join(" · ")} <span class="muted">(lowest first)</span></dd>`}
      </dl>
    </section>
    <section><h2>Cohorts and their standings <button class="plain" id="cohorts-refresh" onClick=${() => setTick(tick + 1)}>Refresh</button></h2>
      <${Cohorts} api=${api} t=${d} tick=${tick} /></section>
    ${api.writes && html`<${EditTournament} api=${api} t=${d} changed=${() => setTick(tick + 1)} />`}
    ${d.league && api.writes && html`<${LeagueOutcomes} api=${api} t=${d} changed=${() => setTick(tick + 1)} />`}`;
}
