// Bans: a game's, listed page by page (player, reason, operator, when) with a lift for
// each, asked first and with a reason; and a player's in every game, on their page. A
// support agent reads both and lifts nothing.
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, html, when } from "./ui.js";
import { seg } from "./api.js";

const PAGE = 50;

/** A game's bans, `PAGE` at a time; `game` from the URL (`#/bans/{game}`) opens it at once. */
export function BansPage({ api, game, go }) {
  // The cursors of the pages before this one (null: the first), and this one's.
  const [before, setBefore] = useState([]);
  const [at, setAt] = useState(null);
  const [res, setRes] = useState(null);
  const [lifting, setLifting] = useState(null);
  async function load(cursor, earlier) {
    setRes(await api.get(`/admin/view/games/${seg(game)}/bans`, { limit: PAGE, cursor }));
    setBefore(earlier);
    setAt(cursor);
    setLifting(null);
  }
  useEffect(() => { if (game) load(null, []); }, [game]);
  const next = res?.ok ? res.data.next_cursor : null;
  return html`<section>
    <h2>Bans${game && html` in <span id="bans-game">${game}</span>`}</h2>
    <form id="bans-of-game" onSubmit=${(e) => { e.preventDefault(); go(`#/bans/${new FormData(e.target).get("game").trim()}`); }}>
      <div class="field"><label>Game</label><input name="game" value=${game ?? ""} /></div><button type="submit">Show</button>
    </form>
    ${res && !res.ok && html`<${Problem} error=${res.error} />`}
    ${res?.ok && html`<table id="bans"><thead><tr><th>Player</th><th>Reason</th><th>Operator</th><th>When</th><th></th></tr></thead><tbody>
      ${res.data.bans.map((b) => html`<tr data-player=${b.player_id}>
        <td><a href=${`#/players/${b.player_id}`}>${b.player_id}</a></td><td class="reason">${b.reason}</td>
        <td class="actor muted">${b.actor}</td><td class="muted">${when(b.at)}</td>
        <td>${api.writes && html`<button class="plain lift" onClick=${() => setLifting(b.player_id)}>Lift</button>`}</td></tr>`)}
      </tbody></table>${res.data.bans.length === 0 && html`<p class="muted" id="bans-none">No one is banned from ${game}.</p>`}
      <p>${before.length > 0 && html`<button class="plain" onClick=${() => load(before[before.length - 1], before.slice(0, -1))}>Previous</button> `}
        ${next && html`<button class="plain" id="bans-next" onClick=${() => load(next, [...before, at])}>Next</button>`}</p>`}
    ${lifting && html`<h3>Lift ${lifting}'s ban</h3>
      <${ActionForm} key=${lifting} id="lift-ban" label="Lift ban"
        fields=${[{ name: "reason", label: "Reason" }]}
        confirm=${() => `Lift ${lifting}'s ban from ${game}? (Removed standings do not come back.)`}
        submit=${(v) => api.send("DELETE", `/games/${seg(game)}/bans/${seg(lifting)}`, { reason: v.reason })}
        done=${() => { load(at, before); return `The ban of ${lifting} is lifted.`; }} />`}
  </section>`;
}

/** The player's bans in every game (`tick` reloads them after an action on the page). */
export function PlayerBans({ api, p, tick }) {
  const [res, setRes] = useState(null);
  useEffect(() => { api.get(`/admin/players/${seg(p)}/bans`).then(setRes); }, [p, tick]);
  if (!res) return null;
  return html`<section>
    <h2>Bans</h2>
    ${!res.ok && html`<${Problem} error=${res.error} />`}
    ${res.ok && (res.data.bans.length === 0 ? html`<p class="muted" id="player-bans-none">Banned from no game.</p>`
      : html`<table id="player-bans"><thead><tr><th>Game</th><th>Reason</th><th>Operator</th><th>When</th></tr></thead><tbody>
        ${res.data.bans.map((b) => html`<tr data-game=${b.game}><td><a href=${`#/bans/${b.game}`}>${b.game}</a></td>
          <td class="reason">${b.reason}</td><td class="muted">${b.actor}</td><td class="muted">${when(b.at)}</td></tr>`)}
      </tbody></table>`)}
  </section>`;
}
