// The console's building blocks: forms whose API errors land next to the field they
// name, actions that ask before they act, and small views of the API's values.
import { html } from "htm/preact";
import { useState } from "preact/hooks";

export { html };

/** A form for one API call. `fields`: [{name, label, type, options, value, placeholder}];
 * `submit(values)` answers the API's {ok, error, data}; `confirm(values)` (optional) is
 * the question asked before it is sent; `done(data, values)` says what happened. */
export function ActionForm({ id, fields, submit, confirm, done, label, danger }) {
  const blank = (f) => (f.options ? f.options[0] : f.type === "checkbox" ? false : "");
  const initial = Object.fromEntries(fields.map((f) => [f.name, f.value ?? blank(f)]));
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState({});
  const [formError, setFormError] = useState(null);
  const [asking, setAsking] = useState(null);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState(null);

  async function send() {
    setBusy(true);
    setAsking(null);
    const res = await submit(values);
    setBusy(false);
    if (res.ok) {
      setErrors({});
      setFormError(null);
      setOutcome(done ? done(res.data, values) : "Done.");
      return;
    }
    setOutcome(null);
    const text = `${res.error.code}: ${res.error.message}`;
    const names = fields.map((f) => f.name);
    // The form's field the error names, or holds (`schedules[0].cron` is in `schedules`).
    const f = res.error.field ?? "";
    const field = names.find((n) => f === n || f.startsWith(`${n}.`) || f.startsWith(`${n}[`));
    if (field) {
      setErrors({ [field]: text });
      setFormError(null);
    } else {
      setErrors({});
      setFormError(text);
    }
  }

  function onSubmit(e) {
    e.preventDefault();
    setOutcome(null);
    const question = confirm?.(values);
    if (question) setAsking(question);
    else send();
  }

  const set = (name, v) => setValues({ ...values, [name]: v });
  return html`<form id=${id} onSubmit=${onSubmit}>
    ${fields.map((f) => html`<div class="field">
      <label for=${`${id}-${f.name}`}>${f.label}</label>
      ${f.options
        ? html`<select id=${`${id}-${f.name}`} name=${f.name} value=${values[f.name]}
            onChange=${(e) => set(f.name, e.target.value)}>
            ${f.options.map((o) => html`<option value=${o}>${o || "(default)"}</option>`)}
          </select>`
        : f.type === "textarea"
          ? html`<textarea id=${`${id}-${f.name}`} name=${f.name} value=${values[f.name]} aria-invalid=${errors[f.name] ? "true" : "false"}
              onInput=${(e) => set(f.name, e.target.value)} />`
          : f.type === "checkbox"
            ? html`<input type="checkbox" id=${`${id}-${f.name}`} name=${f.name} checked=${values[f.name]}
                onChange=${(e) => set(f.name, e.target.checked)} />`
            : html`<input id=${`${id}-${f.name}`} name=${f.name} type=${f.type ?? "text"} value=${values[f.name]} placeholder=${f.placeholder ?? ""}
                aria-invalid=${errors[f.name] ? "true" : "false"} onInput=${(e) => set(f.name, e.target.value)} />`}
      ${errors[f.name] && html`<div class="error" data-for=${f.name}>${errors[f.name]}</div>`}
    </div>`)}
    <button type="submit" class=${danger ? "danger" : ""} disabled=${busy}>${label}</button>
    ${asking && html`<div class="confirm">${asking}
      <button type="button" class="danger confirm-yes" onClick=${send}>Confirm</button>
      <button type="button" class="plain" onClick=${() => setAsking(null)}>Cancel</button></div>`}
    ${formError && html`<div class="form-error" data-for="form">${formError}</div>`}
    ${outcome && html`<div class="done">${outcome}</div>`}
  </form>`;
}

/** A row's player: the name the profile gives, the id, the country. */
export function Player({ row }) {
  return html`<a href=${`#/players/${row.player_id}`} class="player">${row.display_name ?? row.player_id}</a>
    ${row.display_name && html` <span class="muted id">${row.player_id}</span>`}
    ${row.country && html` <span class="pill cc">${row.country}</span>`}`;
}

export function Rows({ rows, me, id }) {
  return html`<table id=${id}>
    <thead><tr><th>Rank</th><th>Player</th><th>Score</th><th>Updated</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr data-player=${r.player_id} class=${r.player_id === me ? "me" : ""}>
      <td class="rank">${r.rank}</td><td><${Player} row=${r} /></td><td class="score">${String(r.score)}</td>
      <td class="muted">${r.updated_at}</td></tr>`)}</tbody>
  </table>`;
}

export function Problem({ error }) {
  return error ? html`<p class="bad problem">${error.code}: ${error.message}</p>` : null;
}

export const when = (t) => (t ? new Date(t).toISOString().replace(".000Z", "Z") : "-");
