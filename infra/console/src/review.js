// The review queue (docs/integrity.md): a game's results held by a board's integrity
// rules, oldest first, a match held on many boards listed once with its boards, each
// with the rule, the figures that tripped it and the player's recent results; an
// operator approves (applied as the board's policy would have applied it when it
// arrived) or rejects the match on every board, with a reason and a confirmation,
// exactly once.
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, html, when } from "./ui.js";
import { seg } from "./api.js";

function Recent({ recent }) {
  if (!recent.length) return html`<span class="muted">none</span>`;
  return recent.map((r) => html`<div class="muted">${r.match_id}: ${String(r.score)}${r.review ? ` (${r.review})` : ""}</div>`);
}

function Decide({ api, held, n, decided }) {
  return html`<div class="decide">
    ${["approve", "reject"].map((decision) => html`<${ActionForm} id=${`${decision}-${n}`} label=${decision === "approve" ? "Approve" : "Reject"}
      danger=${decision === "reject"}
      fields=${[{ name: "reason", label: "Reason" }]}
      confirm=${() => `${decision === "approve" ? "Approve" : "Reject"} ${held.player_id}'s ${String(held.score)} on ${held.boards.length > 1 ? `its ${held.boards.length} boards` : held.leaderboard_id}?`}
      submit=${(v) => api.send("POST", `/admin/held/${seg(held.id)}`, { decision, reason: v.reason })}
      done=${(r) => { decided(held.id, r); const on = r.boards.length > 1 ? ` on ${r.boards.length} boards` : "";
        return r.decision === "APPROVED"
          ? `Approved${on}${r.update_applied ? `: the standing is now ${String(r.score)}` : " (the standing already beat it)"}.`
          : `Rejected${on}${r.banned ? "; the player is now banned" : ""}.`; }} />`)}
  </div>`;
}

/** The queue; with `game` (a link from the overview), that game's, shown at once. */
export function ReviewPage({ api, game }) {
  const [query, setQuery] = useState(null);
  const [page, setPage] = useState(null);
  const [decisions, setDecisions] = useState({});
  async function load(q, cursor) {
    setQuery(q);
    setPage(await api.get("/admin/held", { ...q, cursor, limit: 25 }));
  }
  useEffect(() => { if (game) load({ game }); }, [game]);
  return html`<section>
    <h2>Review queue</h2>
    <p class="muted">Results a board's integrity rules held: on no read until approved. An approval applies the result as the board's policy would have when it arrived; a rejection may ban after the game's count.</p>
    <form id="held-filter" onSubmit=${(e) => {
      e.preventDefault();
      const f = new FormData(e.target);
      load({ game: f.get("game").trim(), board: f.get("board").trim(), player: f.get("player").trim() });
    }}>
      <div class="field"><label>Game (empty: standalone boards)</label><input name="game" value=${game ?? ""} /></div>
      <div class="field"><label>Board</label><input name="board" /></div>
      <div class="field"><label>Player</label><input name="player" /></div>
      <button type="submit">Show</button>
    </form>
    ${page && !page.ok && html`<${Problem} error=${page.error} />`}
    ${page?.ok && html`<table id="held"><thead><tr><th>Held</th><th>Boards</th><th>Player</th><th>Match</th><th>Score</th>
      <th>Rule</th><th>Recent results</th><th>Decision</th></tr></thead><tbody>
      ${page.data.held.map((h, n) => html`<tr data-player=${h.player_id} data-rule=${h.rule} data-n=${n}>
        <td class="muted">${when(h.held_at)}</td><td class="boards" data-boards=${h.boards.length}>${h.boards.map((b) => html`<div><a href=${`#/boards/${b.leaderboard_id}`}>${b.leaderboard_id}</a></div>`)}</td>
        <td><a href=${`#/players/${h.player_id}`}>${h.player_id}</a></td><td>${h.match_id}</td><td>${String(h.score)}</td>
        <td><b>${h.rule}</b> <span class="muted">${String(h.value)} against ${String(h.limit)}${h.standing != null ? `; standing ${String(h.standing)}` : ""}</span></td>
        <td><${Recent} recent=${h.recent} /></td>
        <td class="decision">${decisions[h.id] ? html`<b>${decisions[h.id]}</b>`
          : api.writes ? html`<${Decide} api=${api} held=${h} n=${n} decided=${(id, r) => setDecisions({ ...decisions, [id]: r.decision })} />`
          : html`<span class="muted">waiting</span>`}</td></tr>`)}
    </tbody></table>
    ${page.data.held.length === 0 && html`<p class="muted" id="held-empty">Nothing waits for review.</p>`}
    ${page.data.next_cursor && html`<p><button class="plain" onClick=${() => load(query, page.data.next_cursor)}>Older</button></p>`}`}
  </section>`;
}
