// A board reset now (docs/operations.md): an operator resets a board with a reason
// (audited, confirmed first). Its standings are sealed as the archive `{board}.reset-{n}`
// and the board starts empty; while the reset runs (a few seconds after the settle time)
// results wait, and the page reads the board again every second. The archive's sealed
// results are shown below once it is done.
import { useEffect } from "preact/hooks";
import { ActionForm, html, when } from "./ui.js";
import { seg } from "./api.js";

export function Reset({ api, lb, board, reload, Results }) {
  const reset = board.reset;
  const running = reset?.status === "RESETTING";
  useEffect(() => {
    if (!running) return undefined;
    const timer = setTimeout(reload, 1000);
    return () => clearTimeout(timer);
  }, [board]);
  return html`<section id="reset">
    <h2>Reset</h2>
    ${reset ? html`<p id="reset-status" data-status=${reset.status}>
        Reset #${reset.reset} by <span class="muted">${reset.requested_by}</span> at ${when(reset.requested_at)} (${reset.reason}):
        <span class=${`pill ${reset.status}`}>${reset.status}</span>
        ${reset.done_at ? html` at ${when(reset.done_at)}` : " — results wait until it is done"}.
        Its standings are sealed as <code id="reset-archive">${reset.archive_id}</code>.</p>`
      : html`<p class="muted">Never reset.</p>`}
    ${api.writes && board.status !== "CLOSED" && html`<${ActionForm} id="reset-form" label="Reset now" danger
      fields=${[{ name: "reason", label: "Reason" }]}
      confirm=${() => `Reset ${lb} now? Its standings are sealed as an archive and the board starts empty; results wait until the reset is done.`}
      submit=${(v) => api.send("POST", `/leaderboards/${seg(lb)}/reset`, { reason: v.reason })}
      done=${(r) => { reload(); return `Reset #${r.reset} asked for; it is being done.`; }} />`}
    ${reset?.status === "DONE" && html`<${Results} api=${api} lb=${reset.archive_id} />`}
  </section>`;
}
