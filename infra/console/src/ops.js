// Operations: the audit trail, stream ingest's mappings, board families,
// and the rank index's cluster as its control plane (ElastiCache) describes it.
import { useEffect, useState } from "preact/hooks";
import { ActionForm, Problem, html, when } from "./ui.js";
import { seg } from "./api.js";

export function AuditPage({ api }) {
  const [records, setRecords] = useState([]);
  const [next, setNext] = useState(undefined);
  const [error, setError] = useState(null);
  const [filter, setFilter] = useState("");
  async function more(cursor) {
    const res = await api.get("/admin/audit", { limit: 50, cursor });
    if (!res.ok) return setError(res.error);
    setRecords((r) => (cursor ? [...r, ...res.data.records] : res.data.records));
    setNext(res.data.next_cursor);
  }
  useEffect(() => { more(null); }, []);
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = records.filter((r) => {
    const text = [r.action, r.actor, r.reason, r.leaderboard_id, r.game, r.player_id].join(" ").toLowerCase();
    return words.every((w) => text.includes(w));
  });
  return html`<section>
    <h2>Audit trail</h2>
    <div class="field"><label>Filter (action, operator, player, board, game, reason)</label>
      <input id="audit-filter" value=${filter} onInput=${(e) => setFilter(e.target.value)} /></div>
    <${Problem} error=${error} />
    <table id="audit"><thead><tr><th>When</th><th>Action</th><th>Operator</th><th>Board / game</th><th>Player</th><th>Reason</th></tr></thead>
      <tbody>${shown.map((r) => html`<tr data-action=${r.action}>
        <td class="muted">${when(r.at)}</td><td>${r.action}</td><td class="actor">${r.actor}</td>
        <td>${r.leaderboard_id ?? r.game ?? "-"}</td><td>${r.player_id ?? "-"}</td><td class="reason">${r.reason}</td></tr>`)}</tbody></table>
    <p class="muted">${shown.length} of ${records.length} loaded records shown.
      ${next && html` <button class="plain" id="audit-more" onClick=${() => more(next)}>Load older</button>`}</p>
  </section>`;
}

const EXAMPLE = {
  fields: { player_id: "/user/id", match_id: "/match", score: "/points", game: { const: "game" }, mode: { const: "ranked" }, region: { const: "eu" } },
  timestamp: "rfc3339",
};

export function IngestPage({ api }) {
  const [letters, setLetters] = useState(null);
  useEffect(() => { api.get("/admin/dead-letters").then(setLetters); }, []);
  const [source, setSource] = useState("");
  const [current, setCurrent] = useState(null);
  const [text, setText] = useState("");
  const [note, setNote] = useState(null);
  async function open(name, version) {
    setSource(name);
    setNote(null);
    setCurrent(null);
    const res = await api.get(`/admin/mappings/${seg(name)}`, { version });
    setCurrent(res);
    if (res.ok) {
      const { source: _s, version: _v, ...body } = res.data;
      setText(JSON.stringify(body, null, 2));
    } else if (res.status === 404 && !version) {
      setText(JSON.stringify(EXAMPLE, null, 2));
    }
  }
  async function put(dryRun) {
    setNote(null);
    let body;
    try {
      body = JSON.parse(text);
    } catch (e) {
      return setNote({ bad: true, text: `not JSON: ${e.message}` });
    }
    const res = await api.send("PUT", `/admin/mappings/${seg(source)}`, body, dryRun ? { dry_run: true } : {});
    if (!res.ok) return setNote({ bad: true, text: `${res.error.code}: ${res.error.message}` });
    if (dryRun) return setNote({ bad: false, text: `Valid: it would be version ${res.data.version}.` });
    setNote({ bad: false, text: res.status === 201 ? `Saved as version ${res.data.version}.` : `Unchanged: already version ${res.data.version}.` });
    setCurrent(res);
  }
  const version = current?.ok ? current.data.version : 0;
  return html`<section>
      <h2>Stream ingest: schema mappings</h2>
      <p class="muted">A Kafka topic's or a Kinesis source's events become results through its mapping; stream ingest reads a new version from its next batch.</p>
      <form id="open-mapping" onSubmit=${(e) => { e.preventDefault(); open(new FormData(e.target).get("source").trim()); }}>
        <div class="field"><label>Source</label><input name="source" placeholder="pod-1-score-updates" /></div><button type="submit">Open</button>
      </form>
      ${letters && !letters.ok && html`<${Problem} error=${letters.error} />`}
      ${letters?.ok && html`<p id="dead-letters">Dead letters: <b>${letters.data.waiting}</b> waiting, ${letters.data.in_flight} being read
        <span class="muted">(records that can never apply, with why, in the dead-letter queue)</span></p>`}
    </section>
    ${source && html`<section>
      <h2>${source} ${current && html`<span class="pill" id="mapping-version">${version ? `version ${version}` : "no mapping yet"}</span>`}</h2>
      ${version > 1 && html`<p>Older versions: ${Array.from({ length: version - 1 }, (_, i) => i + 1).map((v) =>
        html`<button class="plain" onClick=${() => open(source, v)}>v${v}</button> `)}</p>`}
      <div class="field"><label for="mapping-text">Mapping (JSON)</label>
        <textarea id="mapping-text" aria-invalid=${note?.bad ? "true" : "false"} value=${text} onInput=${(e) => setText(e.target.value)} />
        ${note && html`<div id="mapping-note" class=${note.bad ? "error" : "done"} data-for="mapping">${note.text}</div>`}</div>
      ${api.writes && html`<p><button class="plain" id="validate-mapping" onClick=${() => put(true)}>Validate</button>
        <button id="save-mapping" onClick=${() => put(false)}>Save as the next version</button></p>`}
    </section>`}`;
}

export function FamilyForm({ api }) {
  return html`<section>
    <h2>Create a board family</h2>
    <p class="muted">A game and mode's boards: one per region and period, opened as their windows start.</p>
    <${ActionForm} id="create-family" label="Create family"
      fields=${[
        { name: "game", label: "Game" },
        { name: "mode", label: "Mode" },
        { name: "policy", label: "Policy", options: ["BEST", "MIN", "LATEST", "SUM"] },
        { name: "regions", label: "Regions (comma-separated)", value: "eu,na" },
        { name: "periods", label: "Periods (comma-separated)", value: "ALL_TIME,DAILY,WEEKLY" },
      ]}
      submit=${(v) => api.send("POST", "/families", {
        game: v.game, mode: v.mode, policy: v.policy,
        regions: v.regions.split(",").map((s) => s.trim()).filter(Boolean),
        periods: v.periods.split(",").map((s) => s.trim()).filter(Boolean),
      })}
      done=${(f) => `Family ${f.game}/${f.mode}: ${f.regions.length} regions, ${f.periods.length} periods.`} />
  </section>`;
}

export function CachePage({ api }) {
  const [view, setView] = useState(null);
  useEffect(() => { api.get("/admin/index").then(setView); }, []);
  const rg = view?.ok ? view.data.replication_group : null;
  return html`<section id="cache">
    <h2>Rank index cluster ${rg && html`<span class=${`pill ${rg.status}`}>${rg.replication_group_id}: ${rg.status}</span>`}</h2>
    ${view && !view.ok && html`<${Problem} error=${view.error} />`}
    ${rg && html`<table id="shards"><thead><tr><th>Shard</th><th>Status</th><th>Slots</th><th>Members</th></tr></thead><tbody>
      ${rg.node_groups.map((g) => html`<tr data-shard=${g.node_group_id}><td>${g.node_group_id}</td>
        <td><span class=${`pill ${g.status}`}>${g.status}</span></td><td class="slots">${g.slots || "all"}</td>
        <td>${g.members.map((m) => html`<div>${m.cache_cluster_id} <span class="muted">${m.role ?? ""} ${m.availability_zone ?? ""}</span></div>`)}</td></tr>`)}
    </tbody></table>`}
    ${view?.ok && view.data.events && html`<h3>Events (24 h)</h3><table id="cache-events"><tbody>
      ${view.data.events.map((e) => html`<tr><td class="muted">${e.date}</td><td>${e.source_id}</td><td>${e.message}</td></tr>`)}</tbody></table>`}
    ${view?.ok && view.data.unavailable.length > 0 && html`<h3>Not available here</h3>
      <ul id="unavailable">${view.data.unavailable.map((u) => html`<li class="muted">${u}</li>`)}</ul>`}
    <p class="muted">After a failover, a node replacement or a reboot, ElastiCache notifies the repair function, which marks the boards on the shard's slots for a rebuild from DynamoDB.</p>
  </section>`;
}
