// Players: found by a prefix of their name (case and accents aside) or opened by id; a
// player's page: profile (the name reset), their bans, standings on every board of a game, history
// in a family, and the operator's actions (remove an entry, ban, lift a ban, erase),
// each with a reason and a confirmation; a support role sees the page without them. A ban or an erasure that ran out of time answers 202 with a cursor: the
// console calls again with it until the sweep is complete.
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, html, when } from "./ui.js";
import { seg } from "./api.js";
import { PlayerBans } from "./bans.js";
import { PlayerRewards } from "./rewards.js";

async function sweep(api, method, path, body) {
  let res = await api.send(method, path, body);
  for (let i = 0; res.ok && res.status === 202 && i < 50; i++) {
    res = await api.send(method, path, body, { cursor: res.data.cursor });
  }
  return res;
}

/** `p`'s rank answer on each of `boards`, in their order (read at once). */
function ranksOn(api, boards, p) {
  return Promise.all(boards.map((b) =>
    api.get(`/admin/view/leaderboards/${seg(b.leaderboard_id)}/players/${seg(p)}/rank`, { k: 0 })));
}

function Standings({ api, p }) {
  const [game, setGame] = useState("");
  const [rows, setRows] = useState(null);
  async function load(g) {
    const boards = await api.get("/admin/view/leaderboards", { game: g, status: "ACTIVE", limit: 200 });
    if (!boards.ok) return setRows({ error: boards.error });
    const ranks = await ranksOn(api, boards.data.boards, p);
    setRows({ out: boards.data.boards.map((board, i) => ({ board, rank: ranks[i] })) });
  }
  return html`<section>
    <h2>Standings in a game</h2>
    <form id="standings" onSubmit=${(e) => { e.preventDefault(); const g = new FormData(e.target).get("game"); setGame(g); load(g); }}>
      <div class="field"><label>Game</label><input name="game" /></div><button type="submit">Show</button>
    </form>
    ${rows?.error && html`<${Problem} error=${rows.error} />`}
    ${rows?.out && html`<table id="standings-rows"><thead><tr><th>Board</th><th>Rank</th><th>Score</th></tr></thead><tbody>
      ${rows.out.map(({ board, rank }) => html`<tr data-board=${board.leaderboard_id}>
        <td><a href=${`#/boards/${board.leaderboard_id}`}>${board.leaderboard_id}</a></td>
        ${rank.ok ? html`<td>#${rank.data.global_rank} of ${rank.data.total}</td><td>${String(rank.data.score)}</td>`
                  : html`<td colspan="2" class="muted">${rank.error.code}</td>`}</tr>`)}
      </tbody></table>${rows.out.length === 0 && html`<p class="muted">No open board of ${game}.</p>`}`}
  </section>`;
}

/** A row's metadata (what the game attached to the result that stands), compactly. */
function Metadata({ row }) {
  const m = row?.metadata;
  if (!m || Object.keys(m).length === 0) return null;
  return html`<code class="metadata">${Object.entries(m).map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ")}</code>`;
}

/** The player's standing on every open board (every game's, and standalone boards'):
 * the boards listed page by page, one rank read each; boards where they have none are
 * left out. Reads grow with the open boards, so it runs when asked (at most 1,000). */
function EveryBoard({ api, p }) {
  const [state, setState] = useState(null);
  async function load() {
    setState({ checked: 0, rows: [], busy: true });
    const rows = [];
    let checked = 0;
    let cursor;
    do {
      const page = await api.get("/admin/view/leaderboards", { status: "ACTIVE", limit: 200, cursor });
      if (!page.ok) return setState({ error: page.error });
      const ranks = await ranksOn(api, page.data.boards, p);
      page.data.boards.forEach((b, i) => { if (ranks[i].ok) rows.push({ board: b, rank: ranks[i].data }); });
      checked += page.data.boards.length;
      cursor = page.data.next_cursor;
      setState({ checked, rows: [...rows], busy: Boolean(cursor) });
    } while (cursor && checked < 1000);
    setState({ checked, rows, busy: false, more: Boolean(cursor) });
  }
  const byGame = {};
  for (const r of state?.rows ?? []) (byGame[r.board.game ?? "(no game)"] ??= []).push(r);
  return html`<section>
    <h2>Standings on every open board <button class="plain" id="standings-all" onClick=${load}>Show</button></h2>
    ${state?.error && html`<${Problem} error=${state.error} />`}
    ${state && !state.error && html`<p class="muted" id="standings-all-count">${state.rows.length} standings on ${state.checked} open boards${state.busy ? "..." : ""}${state.more ? " (the first 1,000 boards)" : ""}</p>
      <table id="standings-all-rows"><thead><tr><th>Game</th><th>Board</th><th>Rank</th><th>Score</th><th>The result it stands on</th></tr></thead><tbody>
      ${Object.entries(byGame).map(([game, rows]) => rows.map(({ board, rank }) => html`<tr data-board=${board.leaderboard_id}>
        <td>${game}</td><td><a href=${`#/boards/${board.leaderboard_id}`}>${board.leaderboard_id}</a></td>
        <td>#${rank.global_rank} of ${rank.total}</td><td>${String(rank.score)}</td>
        <td class="result"><span class="muted">${when(rank.updated_at)}</span> <${Metadata} row=${rank.neighbors.find((n) => n.self)} /></td></tr>`))}
      </tbody></table>`}
  </section>`;
}

/** The player's tier in every league and what its seals decided for them, newest first. */
function Leagues({ api, p }) {
  const [rows, setRows] = useState(null);
  useEffect(() => {
    (async () => {
      const list = await api.get("/admin/view/tournaments", { limit: 100 });
      if (!list.ok) return setRows({ error: list.error });
      const leagues = list.data.tournaments.filter((t) => t.league);
      const standings = await Promise.all(leagues.map((t) =>
        api.get(`/admin/view/tournaments/${seg(t.tournament_id)}/players/${seg(p)}/league`)));
      setRows({ out: leagues.map((t, i) => ({ t, s: standings[i] })) });
    })();
  }, [p]);
  if (!rows) return null;
  return html`<section>
    <h2>Leagues</h2>
    ${rows.error && html`<${Problem} error=${rows.error} />`}
    ${rows.out && html`<table id="leagues"><thead><tr><th>League</th><th>Tier now</th><th>Last seals (newest first)</th></tr></thead><tbody>
      ${rows.out.map(({ t, s }) => html`<tr data-tournament=${t.tournament_id} data-tier=${s.ok ? s.data.tier : ""}>
        <td><a href=${`#/tournaments/${t.tournament_id}`}>${t.tournament_id}</a></td>
        ${s.ok ? html`<td><b>${s.data.tier}</b></td><td>${s.data.changes.length === 0 ? html`<span class="muted">none yet</span>`
          : s.data.changes.slice(0, 3).map((c) => html`<div>${c.occurrence}: #${c.rank ?? "-"} in cohort ${c.cohort}, ${c.tier_before} → ${c.tier_after}${c.reward ? `, ${c.reward}` : ""}</div>`)}</td>`
          : html`<td colspan="2" class="muted">${s.error.code}</td>`}</tr>`)}
    </tbody></table>${rows.out.length === 0 && html`<p class="muted">No league.</p>`}`}
  </section>`;
}

/** The tournaments (not leagues) the player is in now: their cohort in each current
 * occurrence, with their place in it (one cohort read per tournament; a 404 is a
 * tournament they did not join). */
function Tournaments({ api, p }) {
  const [rows, setRows] = useState(null);
  useEffect(() => {
    (async () => {
      const list = await api.get("/admin/view/tournaments", { limit: 100 });
      if (!list.ok) return setRows({ error: list.error });
      const cups = list.data.tournaments.filter((t) => !t.league);
      const cohorts = await Promise.all(cups.map((t) =>
        api.get(`/admin/view/tournaments/${seg(t.tournament_id)}/players/${seg(p)}/cohort`)));
      setRows({ out: cups.map((t, i) => ({ t, c: cohorts[i] })).filter(({ c }) => c.status !== 404) });
    })();
  }, [p]);
  if (!rows) return null;
  return html`<section>
    <h2>Tournaments</h2>
    ${rows.error && html`<${Problem} error=${rows.error} />`}
    ${rows.out && html`<table id="player-tournaments"><thead><tr><th>Tournament</th><th>Occurrence</th><th>Cohort</th><th>Place</th><th>Ends</th></tr></thead><tbody>
      ${rows.out.map(({ t, c }) => html`<tr data-tournament=${t.tournament_id} data-rank=${c.ok ? c.data.rank ?? "" : ""}>
        <td><a href=${`#/tournaments/${t.tournament_id}`}>${t.tournament_id}</a></td>
        ${c.ok ? html`<td>${c.data.occurrence}</td><td>${c.data.cohort} (${c.data.members} of ${c.data.size})</td>
          <td><b>${c.data.rank == null ? "no result yet" : `#${c.data.rank}`}</b></td><td class="muted">${when(c.data.ends_at)}</td>`
          : html`<td colspan="4" class="muted">${c.error.code}</td>`}</tr>`)}
    </tbody></table>${rows.out.length === 0 && html`<p class="muted">In no current tournament.</p>`}`}
  </section>`;
}

function History({ api, p }) {
  const [hist, setHist] = useState(null);
  return html`<section>
    <h2>History (sealed windows)</h2>
    <form id="history" onSubmit=${async (e) => {
      e.preventDefault();
      const f = new FormData(e.target);
      setHist(await api.get(`/admin/view/games/${seg(f.get("game"))}/modes/${seg(f.get("mode"))}/players/${seg(p)}/history`, { limit: 20 }));
    }}>
      <div class="field"><label>Game</label><input name="game" /></div>
      <div class="field"><label>Mode</label><input name="mode" /></div><button type="submit">Show</button>
    </form>
    ${hist && !hist.ok && html`<${Problem} error=${hist.error} />`}
    ${hist?.ok && html`<table><thead><tr><th>Window</th><th>Board</th><th>Rank</th><th>Score</th></tr></thead><tbody>
      ${hist.data.windows.map((w) => html`<tr><td>${w.period} ${w.window}</td><td>${w.leaderboard_id}</td><td>#${w.rank}</td><td>${String(w.score)}</td></tr>`)}
    </tbody></table>${hist.data.windows.length === 0 && html`<p class="muted">No sealed window.</p>`}`}
  </section>`;
}

function Actions({ api, p, changed }) {
  return html`<section id="player-actions">
    <h2>Actions</h2>
    <h3>Remove an entry</h3>
    <${ActionForm} id="remove-entry" label="Remove" danger
      fields=${[{ name: "leaderboard_id", label: "Board" }, { name: "reason", label: "Reason" }]}
      confirm=${(v) => `Remove ${p} from ${v.leaderboard_id}?`}
      submit=${(v) => api.send("DELETE", `/leaderboards/${seg(v.leaderboard_id.trim())}/players/${seg(p)}`, { reason: v.reason })}
      done=${(r) => { changed(); return `Removed from ${r.leaderboard_id}.`; }} />
    <h3>Ban from a game</h3>
    <${ActionForm} id="ban" label="Ban" danger
      fields=${[{ name: "game", label: "Game" }, { name: "reason", label: "Reason" }]}
      confirm=${(v) => `Ban ${p} from ${v.game}? Their standings leave every board of the game.`}
      submit=${(v) => sweep(api, "PUT", `/games/${seg(v.game.trim())}/bans/${seg(p)}`, { reason: v.reason })}
      done=${(r, v) => { changed(); return `Banned from ${v.game}; ${r.entries} standings removed.${r.complete ? "" : " The sweep is not finished: submit again to go on."}`; }} />
    <h3>Lift a ban</h3>
    <${ActionForm} id="unban" label="Lift ban"
      fields=${[{ name: "game", label: "Game" }, { name: "reason", label: "Reason" }]}
      confirm=${(v) => `Lift ${p}'s ban from ${v.game}? (Removed standings do not come back.)`}
      submit=${(v) => api.send("DELETE", `/games/${seg(v.game.trim())}/bans/${seg(p)}`, { reason: v.reason })}
      done=${(_r, v) => { changed(); return `The ban from ${v.game} is lifted.`; }} />
    <h3>Erase (right to erasure)</h3>
    <${ActionForm} id="erase" label="Erase" danger
      fields=${[{ name: "reason", label: "Reason" }]}
      confirm=${() => `Erase every trace of ${p}? This cannot be undone.`}
      submit=${(v) => sweep(api, "DELETE", `/players/${seg(p)}`, { reason: v.reason })}
      done=${(r) => { changed(); return r.complete ? `${p} is erased.` : "The erasure is not finished: submit again to go on."; }} />
  </section>`;
}

/** The audit trail's records about `p`: the trail is one list, newest first, with no
 * index by player, so this reads its latest pages (at most 500 records, when asked) and
 * keeps those naming the player; older ones are on the Audit page. */
function PlayerAudit({ api, p }) {
  const [state, setState] = useState(null);
  async function load() {
    const found = [];
    let read = 0;
    let cursor;
    setState({ busy: true, found, read });
    do {
      const page = await api.get("/admin/audit", { limit: 50, cursor });
      if (!page.ok) return setState({ error: page.error });
      found.push(...page.data.records.filter((r) => r.player_id === p));
      read += page.data.records.length;
      cursor = page.data.next_cursor;
    } while (cursor && read < 500);
    setState({ found, read, more: Boolean(cursor) });
  }
  return html`<section>
    <h2>Audit entries about ${p} <button class="plain" id="player-audit-show" onClick=${load}>Show</button></h2>
    ${state?.error && html`<${Problem} error=${state.error} />`}
    ${state && !state.error && !state.busy && html`<p class="muted" id="player-audit-count">${state.found.length} of the latest ${state.read} records${state.more ? " (older ones: the Audit page)" : ""}</p>
      <table id="player-audit"><thead><tr><th>When</th><th>Action</th><th>Operator</th><th>Board / game</th><th>Reason</th></tr></thead>
      <tbody>${state.found.map((r) => html`<tr data-action=${r.action}><td class="muted">${when(r.at)}</td><td>${r.action}</td>
        <td>${r.actor}</td><td>${r.leaderboard_id ?? r.game ?? "-"}</td><td>${r.reason}</td></tr>`)}</tbody></table>`}
  </section>`;
}

export function PlayerPage({ api, p }) {
  const [profile, setProfile] = useState(null);
  const [tick, setTick] = useState(0);
  // Said outside the reset's form, which leaves the page with the name it resets.
  const [resetDone, setResetDone] = useState(null);
  useEffect(() => { api.get(`/admin/view/players/${seg(p)}/profile`).then(setProfile); }, [p, tick]);
  return html`<section>
      <h2>Player <span id="player-id">${p}</span></h2>
      ${profile && !profile.ok && html`<${Problem} error=${profile.error} />`}
      ${profile?.ok && html`<dl id="profile">
        <dt>Name</dt><dd id="profile-name">${profile.data.display_name ?? "-"}</dd><dt>Country</dt><dd>${profile.data.country ?? "-"}</dd>
        <dt>Avatar</dt><dd>${profile.data.avatar ?? "-"}</dd><dt>Profile version</dt><dd>${profile.data.version}</dd>
        ${profile.data.updated_at && html`<dt>Updated</dt><dd>${when(profile.data.updated_at)}</dd>`}</dl>`}
      ${api.writes && profile?.ok && profile.data.display_name && html`<h3>Reset the name</h3>
        <${ActionForm} id="reset-name" label="Reset name" danger
          fields=${[{ name: "reason", label: "Reason" }]}
          confirm=${() => `Reset ${p}'s name "${profile.data.display_name}"? Every row shows no name until the game sets a new one.`}
          submit=${(v) => api.send("PATCH", `/players/${seg(p)}/profile`, { reset: ["display_name"], reason: v.reason })}
          done=${() => { setResetDone("The name is reset."); setTick(tick + 1); return "The name is reset."; }} />`}
      ${resetDone && html`<p class="done" id="reset-done">${resetDone}</p>`}
    </section>
    <${PlayerBans} api=${api} p=${p} tick=${tick} />
    <${EveryBoard} api=${api} p=${p} />
    <${Tournaments} api=${api} p=${p} />
    <${Leagues} api=${api} p=${p} />
    <${PlayerRewards} api=${api} p=${p} />
    <${PlayerAudit} api=${api} p=${p} />
    <div class="grid"><div><${Standings} api=${api} p=${p} /><${History} api=${api} p=${p} /></div>
      <div>${api.writes ? html`<${Actions} api=${api} p=${p} changed=${() => setTick(tick + 1)} />`
        : html`<p class="muted" id="read-only">Support role: this page reads only.</p>`}</div></div>`;
}

/** Players whose name starts with what is typed (case and accents aside), page by page. */
function NameSearch({ api }) {
  const [prefix, setPrefix] = useState("");
  // The cursors of the pages before this one (null: the first), and this one's.
  const [before, setBefore] = useState([]);
  const [at, setAt] = useState(null);
  const [res, setRes] = useState(null);
  async function load(text, cursor, earlier) {
    setRes(await api.get("/admin/players", { name_prefix: text, limit: 20, cursor }));
    setBefore(earlier);
    setAt(cursor);
  }
  const next = res?.ok ? res.data.next_cursor : null;
  return html`<section>
    <h2>Find players by name</h2>
    <form id="find-by-name" onSubmit=${(e) => { e.preventDefault(); const t = new FormData(e.target).get("prefix"); setPrefix(t); load(t, null, []); }}>
      <div class="field"><label>Name starts with</label><input name="prefix" placeholder="zoe" /></div><button type="submit">Search</button>
    </form>
    ${res && !res.ok && html`<${Problem} error=${res.error} />`}
    ${res?.ok && html`<table id="found-players"><thead><tr><th>Name</th><th>Player id</th><th>Country</th></tr></thead><tbody>
      ${res.data.players.map((f) => html`<tr data-player=${f.player_id}><td><a href=${`#/players/${f.player_id}`}>${f.display_name}</a></td>
        <td class="muted">${f.player_id}</td><td>${f.country ?? "-"}</td></tr>`)}
      </tbody></table>${res.data.players.length === 0 && html`<p class="muted">No player's name starts with "${prefix}".</p>`}
      <p>${before.length > 0 && html`<button class="plain" onClick=${() => load(prefix, before[before.length - 1], before.slice(0, -1))}>Previous</button> `}
        ${next && html`<button class="plain" id="found-next" onClick=${() => load(prefix, next, [...before, at])}>Next</button>`}</p>`}
  </section>`;
}

export function FindPlayerPage({ api, go }) {
  return html`<${NameSearch} api=${api} />
    <section><h2>Open a player by id</h2>
    <form id="goto-player" onSubmit=${(e) => { e.preventDefault(); go(`#/players/${new FormData(e.target).get("player").trim()}`); }}>
      <div class="field"><label>Player id</label><input name="player" /></div><button type="submit">Open</button>
    </form></section>`;
}
