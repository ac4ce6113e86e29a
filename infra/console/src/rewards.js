// Reward tables and players' rewards (docs/rewards.md): a board's page shows the table
// its window is paid by (a family's board, its family's), and an operator changes a
// standalone board's with a reason; a player's page lists their rewards to claim and
// those claimed, by whom and when.
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, html, when } from "./ui.js";
import { seg } from "./api.js";

const range = (r) => (r.top_percent ? `top ${r.top_percent}%` : r.from_rank === r.to_rank ? `#${r.from_rank}` : `#${r.from_rank}-${r.to_rank}`);

export function RewardTable({ api, lb, board, reload }) {
  const table = board.rewards;
  const standalone = !board.game && !lb.startsWith("t:");
  return html`<section id="reward-table">
    <h2>Rewards</h2>
    ${!table && html`<p class="muted" id="no-rewards">No reward table${board.game ? ` (the family ${board.game} / ${board.mode} has none)` : ""}.</p>`}
    ${table && html`<p class="muted">Paid when ${board.game ? `the window seals, by the family ${board.game} / ${board.mode}'s table` : "a reset seals the board"};
        ties at an edge: <b>${table.rank_mode}</b>; unclaimed rewards expire after ${table.expires_after_days} days.</p>
      <table id="reward-ranges"><thead><tr><th>Places</th><th>Reward</th><th>Quantity</th></tr></thead><tbody>
      ${table.ranges.map((r) => html`<tr data-reward=${r.reward}><td>${range(r)}</td><td><b>${r.reward}</b></td><td>${r.quantity}</td></tr>`)}
      </tbody></table>`}
    ${api.writes && standalone && html`<h3>Change the table</h3>
      <${ActionForm} id="set-rewards" label="Set table"
        fields=${[{ name: "rewards", label: "Table (JSON; empty for none)", value: table ? JSON.stringify(table) : "" },
                  { name: "reason", label: "Reason" }]}
        confirm=${() => `Change ${lb}'s reward table? Its next reset pays by the new one.`}
        submit=${(v) => {
          let rewards = {};
          try { rewards = v.rewards.trim() ? JSON.parse(v.rewards) : {}; } catch {
            return { ok: false, error: { code: "invalid_json", message: "the table is not JSON", field: "rewards" } };
          }
          return api.send("PUT", `/leaderboards/${seg(lb)}/rewards`, { rewards, reason: v.reason });
        }}
        done=${() => { reload(); return "The table is changed."; }} />`}
  </section>`;
}

function RewardRows({ id, rows }) {
  return html`<table id=${id}><thead><tr><th>Board</th><th>Reward</th><th>Place</th><th>Decided</th><th>Expires</th><th>Claimed</th></tr></thead><tbody>
    ${rows.map((r) => html`<tr data-reward-id=${r.reward_id} data-status=${r.status}>
      <td><a href=${`#/boards/${r.leaderboard_id}`}>${r.leaderboard_id}</a></td><td><b>${r.reward}</b> x ${r.quantity}</td>
      <td>#${r.place} (${String(r.score)})</td><td class="muted">${when(r.decided_at)}</td><td class="muted">${when(r.expires_at)}</td>
      <td>${r.claimed_at ? html`${when(r.claimed_at)} <span class="muted">by ${r.claimed_by}</span>` : "-"}</td></tr>`)}
  </tbody></table>`;
}

export function PlayerRewards({ api, p }) {
  const [got, setGot] = useState(null);
  useEffect(() => { api.get(`/admin/view/players/${seg(p)}/rewards`).then(setGot); }, [p]);
  if (!got) return null;
  if (!got.ok) return html`<section><h2>Rewards</h2><${Problem} error=${got.error} /></section>`;
  const { rewards, claimed } = got.data;
  return html`<section id="player-rewards">
    <h2>Rewards</h2>
    ${rewards.length === 0 && claimed.length === 0 && html`<p class="muted">No rewards.</p>`}
    ${rewards.length > 0 && html`<h3>To claim (${rewards.length})</h3><${RewardRows} id="rewards-open" rows=${rewards} />`}
    ${claimed.length > 0 && html`<h3>Claimed (${claimed.length})</h3><${RewardRows} id="rewards-claimed" rows=${claimed} />`}
  </section>`;
}
