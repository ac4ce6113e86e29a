// Boards: the list (filtered by game, mode, status), creating one, and a board's page:
// its definition and status, the live top with names, a player's rank and neighbours,
// the walk through the board, posting a result or a correction, the index's health, and
// (operators) its exports and its reset now.
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, Rows, html, when } from "./ui.js";
import { seg } from "./api.js";
import { Rules } from "./rules.js";
import { Exports } from "./exports.js";
import { Reset } from "./reset.js";
import { RewardTable } from "./rewards.js";

export function BoardsPage({ api, go }) {
  const [filter, setFilter] = useState({ game: "", mode: "", status: "" });
  const [pages, setPages] = useState([null]);
  const [list, setList] = useState(null);
  const cursor = pages[pages.length - 1];

  useEffect(() => {
    api.get("/admin/view/leaderboards", { ...filter, cursor, limit: 50 }).then(setList);
  }, [filter, cursor]);

  return html`<section>
      <h2>Boards</h2>
      <form id="board-filter" onSubmit=${(e) => {
        e.preventDefault();
        const f = new FormData(e.target);
        setFilter({ game: f.get("game"), mode: f.get("mode"), status: f.get("status") });
        setPages([null]);
      }}>
        <div class="field"><label>Game</label><input name="game" /></div>
        <div class="field"><label>Mode</label><input name="mode" /></div>
        <div class="field"><label>Status</label><select name="status">
          ${["", "ACTIVE", "FROZEN", "CLOSED"].map((s) => html`<option value=${s}>${s || "any"}</option>`)}</select></div>
        <button type="submit">Filter</button>
      </form>
      ${list && !list.ok && html`<${Problem} error=${list.error} />`}
      ${list?.ok && html`<table id="boards">
        <thead><tr><th>Board</th><th>Policy</th><th>Status</th><th>Game / mode</th><th>Period</th><th>Window</th></tr></thead>
        <tbody>${list.data.boards.map((b) => html`<tr data-board=${b.leaderboard_id}>
          <td><a href=${`#/boards/${b.leaderboard_id}`}>${b.leaderboard_id}</a></td><td>${b.policy}</td>
          <td><span class=${`pill ${b.status}`}>${b.status}</span></td><td>${b.game ?? "-"} ${b.mode ?? ""}</td>
          <td>${b.period ?? "-"}</td><td class="muted">${b.starts_at ? `${when(b.starts_at)} .. ${when(b.ends_at)}` : ""}</td></tr>`)}
        </tbody></table>
        <p>${pages.length > 1 && html`<button class="plain" onClick=${() => setPages(pages.slice(0, -1))}>Previous</button> `}
          ${list.data.next_cursor && html`<button class="plain" onClick=${() => setPages([...pages, list.data.next_cursor])}>Next</button>`}</p>`}
    </section>
    ${api.writes && html`<section>
      <h2>Create a board</h2>
      <${ActionForm} id="create-board" label="Create"
        fields=${[
          { name: "leaderboard_id", label: "Board id", placeholder: "game:mode:season" },
          { name: "policy", label: "Policy", options: ["BEST", "MIN", "LATEST", "SUM"] },
          { name: "decimals", label: "Decimals", value: "0" },
          { name: "dense_ranks", label: "Dense ranks", type: "checkbox" },
        ]}
        submit=${(v) => api.send("POST", "/leaderboards", {
          leaderboard_id: v.leaderboard_id, policy: v.policy,
          decimals: /^\d+$/.test(v.decimals) ? Number(v.decimals) : v.decimals, dense_ranks: v.dense_ranks })}
        done=${(b, _v) => { go(`#/boards/${b.leaderboard_id}`); return `Board ${b.leaderboard_id} is ready.`; }} />
    </section>`}`;
}

function Definition({ api, lb, board, reload }) {
  return html`<section>
    <h2>Board <span id="board-id">${lb}</span> <span id="board-status" class=${`pill ${board.status}`}>${board.status}</span></h2>
    <dl>
      <dt>Policy</dt><dd>${board.policy}${board.decimals ? `, ${board.decimals} decimals` : ""}${board.tiebreaks ? `, tie-breaks ${JSON.stringify(board.tiebreaks)}` : ""}</dd>
      <dt>Created</dt><dd>${when(board.created_at)}</dd>
      ${board.game && html`<dt>Family</dt><dd>${board.game} / ${board.mode} / ${board.scope} / ${board.period}</dd>`}
      ${board.starts_at && html`<dt>Window</dt><dd>${when(board.starts_at)} .. ${when(board.ends_at)}</dd>`}
      ${board.closes_at && html`<dt>Closes (grace)</dt><dd>${when(board.closes_at)}</dd>`}
      <dt>Sealed</dt><dd id="sealed">${board.sealed_at ? when(board.sealed_at) : "not sealed"}</dd>
    </dl>
    ${api.writes && html`<${ActionForm} id="board-status-form" label="Change status" danger
      fields=${[
        { name: "status", label: "New status", options: ["FROZEN", "ACTIVE", "CLOSED"] },
        { name: "reason", label: "Reason" },
      ]}
      confirm=${(v) => `Set ${lb} to ${v.status}? ${v.status === "CLOSED" ? "Nothing comes out of CLOSED." : ""}`}
      submit=${(v) => api.send("PATCH", `/leaderboards/${seg(lb)}`, { status: v.status, reason: v.reason })}
      done=${(b) => { reload(); return `Now ${b.status}.`; }} />`}
  </section>`;
}

function LiveTop({ api, lb, tick }) {
  const [mode, setMode] = useState("unique");
  const [top, setTop] = useState(null);
  useEffect(() => {
    let live = true;
    const load = () => api.get(`/admin/view/leaderboards/${seg(lb)}/top`, { n: 10, rank_mode: mode })
      .then((r) => live && setTop(r));
    load();
    const timer = setInterval(load, 1000);
    return () => { live = false; clearInterval(timer); };
  }, [lb, mode, tick]);
  return html`<section>
    <h2>Live top 10 <select id="rank-mode" value=${mode} onChange=${(e) => setMode(e.target.value)}>
      ${["unique", "competition", "dense"].map((m) => html`<option value=${m}>${m}</option>`)}</select></h2>
    ${top && !top.ok && html`<${Problem} error=${top.error} />`}
    ${top?.ok && html`<${Rows} id="top" rows=${top.data.entries} />
      <p class="muted" id="top-meta">${top.data.total} players · ${top.data.source}${top.data.degraded ? " · degraded" : ""} · as of ${top.data.as_of}</p>`}
  </section>`;
}

function FindPlayer({ api, lb }) {
  const [found, setFound] = useState(null);
  const [who, setWho] = useState("");
  return html`<section>
    <h2>Find a player</h2>
    <form id="find-player" onSubmit=${async (e) => {
      e.preventDefault();
      const p = new FormData(e.target).get("player").trim();
      setWho(p);
      setFound(await api.get(`/admin/view/leaderboards/${seg(lb)}/players/${seg(p)}/rank`, { k: 3 }));
    }}>
      <div class="field"><label>Player id</label><input name="player" /></div><button type="submit">Find</button>
    </form>
    ${found && !found.ok && html`<${Problem} error=${found.error} />`}
    ${found?.ok && html`<p id="found">#${found.data.global_rank} of ${found.data.total}, score ${String(found.data.score)},
        top ${found.data.percentile}% · <a href=${`#/players/${who}`}>player page</a></p>
      <${Rows} id="neighbours" rows=${found.data.neighbors} me=${who} />`}
  </section>`;
}

function Walk({ api, lb }) {
  const [page, setPage] = useState(null);
  const load = (query) => api.get(`/admin/view/leaderboards/${seg(lb)}/ranks`, { limit: 20, ...query }).then(setPage);
  useEffect(() => { load({}); }, [lb]);
  return html`<section>
    <h2>The whole board</h2>
    <form id="walk" onSubmit=${(e) => { e.preventDefault(); load({ from_rank: new FormData(e.target).get("from_rank") }); }}>
      <div class="field"><label>From rank</label><input name="from_rank" value="1" /></div><button type="submit">Go</button>
    </form>
    ${page && !page.ok && html`<${Problem} error=${page.error} />`}
    ${page?.ok && html`<${Rows} id="walk-rows" rows=${page.data.entries} />
      <p>${page.data.prev_cursor && html`<button class="plain" onClick=${() => load({ cursor: page.data.prev_cursor })}>Previous</button> `}
      ${page.data.next_cursor && html`<button class="plain" id="walk-next" onClick=${() => load({ cursor: page.data.next_cursor })}>Next</button>`}</p>`}
  </section>`;
}

function PostResult({ api, lb, changed }) {
  return html`<section>
    <h2>Post a result or a correction</h2>
    <p class="muted">A result goes through the board's policy; <b>set</b> is a correction: the standing becomes exactly this score, audited with its reason.</p>
    <${ActionForm} id="post-result" label="Post"
      fields=${[
        { name: "player", label: "Player id" },
        { name: "new_score", label: "Score" },
        { name: "match_id", label: "Match id", placeholder: "generated when empty" },
        { name: "op", label: "Operation", options: ["", "set"] },
        { name: "reason", label: "Reason (set)" },
      ]}
      submit=${(v) => {
        const score = /^-?\d+$/.test(v.new_score.trim()) ? Number(v.new_score) : v.new_score;
        const body = { new_score: score, match_id: v.match_id || `console-${Date.now()}` };
        if (v.op) body.op = v.op;
        if (v.reason) body.reason = v.reason;
        return api.send("POST", `/leaderboards/${seg(lb)}/players/${seg(v.player.trim())}/score`, body);
      }}
      done=${(r) => { changed(); return `${r.player_id}: ${String(r.score)}, #${r.rank} of ${r.total}${r.update_applied ? "" : " (standing unchanged)"}.`; }} />
  </section>`;
}

export function IndexHealth({ api, lb }) {
  const [view, setView] = useState(null);
  const [rebuilt, setRebuilt] = useState(null);
  const load = () => api.get("/admin/index", { leaderboard_id: lb }).then(setView);
  useEffect(() => { load(); }, [lb]);
  const b = view?.ok ? view.data.board : null;
  return html`<section id="index-health">
    <h2>Rank index</h2>
    ${view && !view.ok && html`<${Problem} error=${view.error} />`}
    ${b && html`<dl>
      <dt>Health</dt><dd><span id="health" class=${`pill ${b.health ?? ""}`}>${b.health ?? "unknown"}</span></dd>
      <dt>Hash slot</dt><dd>${b.slot}${b.node_group_id ? ` on shard ${b.node_group_id}` : ""}</dd>
      <dt>Rebuild</dt><dd>${b.rebuild ? `in progress: ${b.rebuild.loaded} loaded since ${when(b.rebuild.started_at)}` : "none in progress"}</dd>
    </dl>`}
    ${view?.ok && view.data.unavailable.map((u) => html`<p class="muted">${u}</p>`)}
    <p>${api.writes && html`<button id="rebuild" onClick=${async () => {
      setRebuilt(await api.send("POST", "/admin/rebuild", { leaderboard_id: lb }));
      load();
    }}>Rebuild from DynamoDB</button> `}<button class="plain" onClick=${load}>Refresh</button></p>
    ${rebuilt && !rebuilt.ok && html`<${Problem} error=${rebuilt.error} />`}
    ${rebuilt?.ok && html`<p class="done" id="rebuilt">${rebuilt.data.boards.map((r) => `${r.outcome}: ${r.loaded} loaded`).join("; ")}${rebuilt.data.done ? "" : " (call again to finish)"}</p>`}
  </section>`;
}

function SealedResults({ api, lb }) {
  const [res, setRes] = useState(null);
  useEffect(() => { api.get(`/admin/view/leaderboards/${seg(lb)}/results`).then(setRes); }, [lb]);
  return html`<section class="sealed-results" data-board=${lb}>
    <h2>Sealed results</h2>
    ${res && !res.ok && html`<${Problem} error=${res.error} />`}
    ${res?.ok && html`<p class="muted">${res.data.total} players, sealed ${when(res.data.sealed_at)}</p>
      <table id="results"><thead><tr><th>Rank</th><th>Player</th><th>Score</th></tr></thead><tbody>
      ${res.data.entries.slice(0, 100).map((e) => html`<tr><td>${e.rank}</td>
        <td>${e.player_id ? html`<a href=${`#/players/${e.player_id}`}>${e.player_id}</a>` : html`<span class="muted">(erased)</span>`}</td>
        <td>${String(e.score)}</td></tr>`)}</tbody></table>`}
  </section>`;
}

export function BoardPage({ api, lb }) {
  const [board, setBoard] = useState(null);
  const [tick, setTick] = useState(0);
  const reload = () => api.get(`/admin/view/leaderboards/${seg(lb)}`).then(setBoard);
  useEffect(() => { reload(); }, [lb]);
  if (!board) return html`<p>Loading ${lb}...</p>`;
  if (!board.ok) return html`<${Problem} error=${board.error} />`;
  return html`<${Definition} api=${api} lb=${lb} board=${board.data} reload=${reload} />
    <div class="grid">
      <div><${LiveTop} api=${api} lb=${lb} tick=${tick} />${api.writes && html`<${PostResult} api=${api} lb=${lb} changed=${() => setTick(tick + 1)} />`}</div>
      <div><${FindPlayer} api=${api} lb=${lb} /><${IndexHealth} api=${api} lb=${lb} /></div>
    </div>
    <${Rules} key=${JSON.stringify(board.data.integrity ?? null)} api=${api} lb=${lb} board=${board.data} reload=${reload} />
    <${RewardTable} key=${JSON.stringify(board.data.rewards ?? null)} api=${api} lb=${lb} board=${board.data} reload=${reload} />
    ${board.data.sealed_at && html`<${SealedResults} api=${api} lb=${lb} />`}
    ${api.writes && html`<${Exports} api=${api} lb=${lb} />`}
    ${!lb.startsWith("t:") && !board.data.sealed_at && html`<${Reset} api=${api} lb=${lb} board=${board.data} reload=${reload} Results=${SealedResults} />`}
    <${Walk} key=${board.data.reset?.done_at ?? ""} api=${api} lb=${lb} />`;
}
