// A board's exports (docs/operations.md): an operator asks for the board's standings as
// a CSV file with a reason (audited); the file is written in the background, so the
// list is read again every second while one is running, and each finished export shows
// a link to its file, good for its 15 minutes (reading the list again makes new ones).
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, html, when } from "./ui.js";
import { seg } from "./api.js";

export function Exports({ api, lb }) {
  const [list, setList] = useState(null);
  const path = `/leaderboards/${seg(lb)}/exports`;
  const load = () => api.get(path).then(setList);
  useEffect(() => { load(); }, [lb]);
  const running = list?.ok && list.data.exports.some((e) => e.status === "RUNNING");
  useEffect(() => {
    if (!running) return undefined;
    const timer = setTimeout(load, 1000);
    return () => clearTimeout(timer);
  }, [list]);
  return html`<section id="exports">
    <h2>Exports</h2>
    <${ActionForm} id="export" label="Export to CSV"
      fields=${[{ name: "reason", label: "Reason" }]}
      confirm=${() => `Write ${lb}'s standings to a CSV file in the stack's bucket?`}
      submit=${(v) => api.send("POST", path, { reason: v.reason })}
      done=${(r) => { load(); return `Export ${r.export_id} asked for; it is being written.`; }} />
    ${list && !list.ok && html`<${Problem} error=${list.error} />`}
    ${list?.ok && list.data.exports.length > 0 && html`<table id="exports-list">
      <thead><tr><th>Asked</th><th>By</th><th>Reason</th><th>Status</th><th>Rows</th><th>File</th></tr></thead>
      <tbody>${list.data.exports.map((e) => html`<tr data-export=${e.export_id} data-status=${e.status}>
        <td>${when(e.requested_at)}</td><td class="muted">${e.requested_by}</td><td>${e.reason}</td>
        <td><span class=${`pill ${e.status}`}>${e.status}</span></td>
        <td>${e.rows}${e.moved ? html` <span class="muted">(${e.moved} moved during it, left out)</span>` : ""}</td>
        <td>${e.url ? html`<a class="export-link" href=${e.url} download>CSV, ${Math.ceil(e.bytes / 1024)} KiB</a>
          <span class="muted"> until ${when(e.url_expires_at)}</span>` : e.status === "FAILED" ? "not written: ask again" : "being written"}</td></tr>`)}
      </tbody></table>`}
  </section>`;
}
