// The overview: is the game healthy? Its traffic and the service's health over the last
// hour, minute by minute, from CloudWatch (the functions' metrics: docs/runbook.md), and
// what needs attention, each linked to the page that deals with it. docs/console.md.
import { useEffect, useState } from "preact/hooks";
import { Problem, html } from "./ui.js";
import { seg } from "./api.js";
import { metric, metricData } from "./metrics.js";

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** The queries: the game's own (by the `Game` dimension), then the service's. */
function queries(game) {
  const g = { Game: game };
  return [
    metric("results", "ResultsAccepted", "Sum", g),
    metric("held", "ResultsHeld", "Sum", g),
    metric("reads", "Reads", "Sum", g),
    metric("degraded", "ReadsDegraded", "Sum", g),
    metric("replies", "Replies", "Sum"),
    metric("errors", "ServerErrorReplies", "Sum"),
    metric("lag", "StreamLagSeconds", "Maximum"),
    metric("letters", "StreamDeadLetters", "Sum"),
    metric("poison", "ProjectorPoisonRecords", "Sum"),
    metric("due", "SealsDue", "Maximum"),
    metric("sealLag", "SealLagSeconds", "Maximum"),
  ];
}

/** The hour as 60 minutes, oldest first: each minute's value (null: no datapoint). */
function minutes(points, end) {
  const first = end - HOUR_MS;
  const out = Array(60).fill(null);
  for (const p of points ?? []) {
    const i = Math.floor((p.at - first) / MINUTE_MS);
    if (i >= 0 && i < 60) out[i] = (out[i] ?? 0) + p.value;
  }
  return out;
}

const total = (m) => m.reduce((a, v) => a + (v ?? 0), 0);
const most = (m) => m.reduce((a, v) => (v == null ? a : Math.max(a ?? v, v)), null);
const recent = (m, n) => m.slice(-n);
const fmt = (v, digits = 0) => (v == null ? "-" : Number(v).toLocaleString(undefined, { maximumFractionDigits: digits }));

/** A minute-by-minute line of the hour (gaps where nothing was written). */
function Spark({ values }) {
  const top = Math.max(1, ...values.map((v) => v ?? 0));
  const pts = values.map((v, i) => (v == null ? null : `${i * 4},${28 - (v / top) * 26}`));
  const runs = [];
  let run = [];
  for (const p of pts) {
    if (p) run.push(p);
    else if (run.length) { runs.push(run); run = []; }
  }
  if (run.length) runs.push(run);
  return html`<svg class="spark" viewBox="0 0 240 30" preserveAspectRatio="none">
    ${runs.map((r) => (r.length === 1 ? html`<circle cx=${r[0].split(",")[0]} cy=${r[0].split(",")[1]} r="1.5" />`
      : html`<polyline points=${r.join(" ")} />`))}</svg>`;
}

function Tile({ id, label, value, note, values, bad }) {
  return html`<div class=${`tile${bad ? " attention" : ""}`} id=${id}>
    <div class="muted">${label}</div><div class="figure">${value}</div>
    ${values && html`<${Spark} values=${values} />`}<div class="muted note">${note}</div></div>`;
}

/** What the figures say needs attention, each with the page that deals with it. */
function attention(f, waiting, letters) {
  const out = [];
  if (waiting > 0) out.push([`${waiting}${waiting >= 100 ? "+" : ""} held ${waiting === 1 ? "match waits" : "matches wait"} for review`, `#/review/${seg(f.game)}`, "review"]);
  if ((letters ?? 0) > 0) out.push([`${letters} stream records in the dead-letter queue`, "#/ingest", "letters"]);
  if (f.errorRate != null && f.errorRate > 0.01) out.push([`${fmt(f.errorRate * 100, 2)} % of replies in the last 5 minutes were 5xx: the runbook's first steps (docs/runbook.md)`, null, "errors"]);
  if (f.degradedShare != null && f.degradedShare > 0) out.push([`${fmt(f.degradedShare * 100, 1)} % of the game's reads in the last 5 minutes were answered without Redis`, "#/cache", "cache"]);
  if ((f.sealLag ?? 0) > 300) out.push([`a window is ${fmt(f.sealLag)} s past its seal time`, "#/boards", "seals"]);
  if ((f.streamLag ?? 0) > 60) out.push([`the stream's reader is ${fmt(f.streamLag)} s behind`, "#/cache", "stream"]);
  return out;
}

export function OverviewPage({ api, game: asked }) {
  const [games, setGames] = useState([]);
  const [game, setGame] = useState(asked ?? "");
  const [data, setData] = useState(null);
  const [queue, setQueue] = useState(null);
  const [letters, setLetters] = useState(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    api.get("/admin/view/leaderboards", { status: "ACTIVE", limit: 200 }).then((r) => {
      const found = [...new Set((r.ok ? r.data.boards : []).map((b) => b.game).filter(Boolean))].sort();
      setGames(found);
      if (!game && found.length) setGame(found[0]);
    });
  }, []);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 60_000);
    return () => clearInterval(t);
  }, []);
  useEffect(() => {
    if (!game) return;
    const end = Math.ceil(Date.now() / MINUTE_MS) * MINUTE_MS;
    metricData(api, queries(game), new Date(end - HOUR_MS), new Date(end))
      .then((r) => setData({ ...r, end }));
    api.get("/admin/held", { game, limit: 100 }).then(setQueue);
    api.get("/admin/dead-letters").then(setLetters);
  }, [game, tick]);

  const m = {};
  if (data?.ok) for (const q of queries(game)) m[q.id] = minutes(data.series[q.id], data.end);
  const five = (id) => total(recent(m[id] ?? [], 5));
  const f = data?.ok ? {
    game,
    errorRate: five("replies") > 0 ? five("errors") / five("replies") : null,
    degradedShare: five("reads") > 0 ? five("degraded") / five("reads") : null,
    sealLag: most(recent(m.sealLag, 5)),
    streamLag: most(recent(m.lag, 5)),
  } : null;
  const waiting = queue?.ok ? queue.data.held.length : null;
  const waitingLetters = letters?.ok ? letters.data.waiting : null;
  const todo = f ? attention(f, waiting, waitingLetters) : [];
  const perMinute = (id) => `${fmt(total(m[id]) / 60, 1)} a minute; ${fmt(total(m[id]))} in the hour`;
  return html`<section>
    <h2>Overview <span class="muted">the last hour, minute by minute</span></h2>
    <form id="overview-game" onSubmit=${(e) => { e.preventDefault(); setGame(new FormData(e.target).get("game").trim()); }}>
      <div class="field"><label>Game</label><input name="game" list="overview-games" value=${game} /></div>
      <datalist id="overview-games">${games.map((g) => html`<option value=${g} />`)}</datalist>
      <button type="submit">Show</button>
      <button type="button" class="plain" onClick=${() => setTick((n) => n + 1)}>Refresh</button>
    </form>
    ${data && !data.ok && html`<${Problem} error=${data.error} />`}
  </section>
  ${f && html`<section id="attention">
    <h2>Needs attention</h2>
    ${todo.length === 0 ? html`<p class="ok" id="attention-none">Nothing: the figures below are within their bounds.</p>`
      : html`<ul>${todo.map(([text, href, kind]) => html`<li data-kind=${kind}>${href ? html`<a href=${href}>${text}</a>` : text}</li>`)}</ul>`}
  </section>
  <section>
    <h2>${game}</h2>
    <div class="tiles">
      <${Tile} id="tile-results" label="Results accepted" value=${fmt(total(m.results))} values=${m.results} note=${perMinute("results")} />
      <${Tile} id="tile-reads" label="Reads" value=${fmt(total(m.reads))} values=${m.reads} note=${perMinute("reads")} />
      <${Tile} id="tile-held" label="Results held for review" value=${fmt(total(m.held))} values=${m.held}
        note=${html`${waiting ?? "-"} ${waiting === 1 ? "match" : "matches"} waiting: <a href=${`#/review/${seg(game)}`}>review</a>`} bad=${waiting > 0} />
      <${Tile} id="tile-cache" label="Reads answered without Redis" value=${fmt(total(m.degraded))} values=${m.degraded}
        note=${html`the cache's health: <a href="#/cache">cache</a>`} bad=${f.degradedShare > 0} />
    </div>
  </section>
  <section>
    <h2>The service <span class="muted">(every game)</span></h2>
    <div class="tiles">
      <${Tile} id="tile-errors" label="Error rate (5xx)" value=${f.errorRate == null ? "-" : `${fmt(f.errorRate * 100, 2)} %`}
        values=${m.errors} note=${`${fmt(total(m.errors))} of ${fmt(total(m.replies))} replies in the hour; the rate: last 5 minutes`} bad=${f.errorRate > 0.01} />
      <${Tile} id="tile-stream" label="Stream lag" value=${f.streamLag == null ? "-" : `${fmt(f.streamLag, 1)} s`} values=${m.lag}
        note="the oldest record of a batch when the projector read it" bad=${f.streamLag > 60} />
      <${Tile} id="tile-letters" label="Dead letters" value=${fmt(total(m.letters) + total(m.poison))} values=${m.letters}
        note=${html`${waitingLetters ?? "-"} waiting: <a href="#/ingest">ingest</a>`} bad=${waitingLetters > 0} />
      <${Tile} id="tile-seals" label="Windows due for their seal" value=${fmt(most(recent(m.due, 5)))} values=${m.due}
        note=${`the most overdue ${f.sealLag == null ? "-" : `${fmt(f.sealLag)} s`} past its settle time`} bad=${f.sealLag > 300} />
    </div>
  </section>`}`;
}
