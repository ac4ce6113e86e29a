// A board's integrity rules (docs/integrity.md): shown to everyone; an operator edits
// them as JSON, sees first which of the board's best standings the edited rules would
// have held (a dry run: nothing stored), and only then applies them, to the board alone
// or to its whole family, with a reason and a confirmation.
import { useState } from "preact/hooks";
import { ActionForm, Problem, html } from "./ui.js";
import { seg } from "./api.js";

const DRY_RUN_LIMIT = 100;

function WouldHold({ run }) {
  return html`<p class="muted" id="rules-checked">${run.would_hold.length} of the best ${run.checked} standings (of ${run.total}) would have been held.</p>
    <table id="rules-would-hold"><thead><tr><th>Player</th><th>Score</th><th>Match</th><th>Rule</th><th>Figure against limit</th></tr></thead><tbody>
      ${run.would_hold.map((w) => html`<tr data-player=${w.player_id} data-rule=${w.rule}>
        <td><a href=${`#/players/${w.player_id}`}>${w.player_id}</a></td><td>${String(w.score)}</td><td>${w.match_id}</td>
        <td><b>${w.rule}</b></td><td class="muted">${String(w.value)} against ${String(w.limit)}</td></tr>`)}
    </tbody></table>`;
}

export function Rules({ api, lb, board, reload }) {
  const now = JSON.stringify(board.integrity ?? {}, null, 2);
  const [text, setText] = useState(now);
  const [run, setRun] = useState(null);
  // What the dry run judged: applying needs a dry run of exactly the text applied.
  const [ran, setRan] = useState(null);
  const family = board.game ? `${board.game} / ${board.mode}` : null;
  let parsed = null;
  try { parsed = JSON.parse(text); } catch { parsed = null; }
  async function dryRun() {
    if (parsed === null) return setRun({ ok: false, error: { code: "invalid_json", message: "the rules are not JSON" } });
    const res = await api.send("POST", "/admin/integrity/dry-run", { leaderboard_id: lb, integrity: parsed, limit: DRY_RUN_LIMIT });
    setRun(res);
    setRan(res.ok ? text : null);
  }
  const scopes = family ? ["this board", `the family ${family}`] : ["this board"];
  return html`<section id="rules">
    <h2>Integrity rules</h2>
    <pre id="rules-now">${board.integrity ? JSON.stringify(board.integrity) : "none"}</pre>
    ${api.writes && board.status !== "CLOSED" && !board.sealed_at && html`
      <div class="field"><label for="rules-text">Rules (JSON, {} for none)</label>
        <textarea id="rules-text" value=${text} onInput=${(e) => { setText(e.target.value); setRan(null); }} /></div>
      <button type="button" id="rules-dry-run" onClick=${dryRun}>Dry run</button>
      ${run && !run.ok && html`<${Problem} error=${run.error} />`}
      ${run?.ok && html`<${WouldHold} run=${run.data} />`}
      ${ran !== null && ran === text && html`<${ActionForm} id="rules-apply" label="Apply the rules" danger
        fields=${[{ name: "scope", label: "Apply to", options: scopes }, { name: "reason", label: "Reason" }]}
        confirm=${(v) => `Apply these rules to ${v.scope === "this board" ? lb : `every open board of ${family}`}, from the next result?`}
        submit=${(v) => api.send("PUT", v.scope === "this board" ? `/leaderboards/${seg(lb)}/integrity`
          : `/families/${seg(board.game)}/${seg(board.mode)}/integrity`, { integrity: parsed, reason: v.reason })}
        done=${(r) => { reload(); return r.boards ? `Applied to ${r.boards.length} open boards of ${family}.` : `Applied to ${lb}.`; }} />`}`}
  </section>`;
}
