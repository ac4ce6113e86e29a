// The API as the console calls it: every call through the public API (no back door),
// each answer as {ok, status, data, error}; an error keeps the API's code, message and
// the field it names (`error.field`: `score`, `schedules[0].cron`), so a form shows it
// there.

/** A path segment: ids are [A-Za-z0-9_.:-], kept as they are; anything else escaped. */
export function seg(id) {
  return encodeURIComponent(id).replace(/%3A/gi, ":");
}

export function makeApi(config, session) {
  async function call(method, path, { query = {}, body } = {}) {
    const url = new URL(config.api.replace(/\/$/, "") + path);
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, String(v));
    }
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await session.fetch(url.toString(), init);
    } catch (e) {
      return { ok: false, status: 0, data: null, error: { code: "network", message: String(e), field: null } };
    }
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (res.ok) return { ok: true, status: res.status, data, error: null };
    const code = data?.error?.code ?? (data?.message ? "gateway" : `http_${res.status}`);
    const message = data?.error?.message ?? data?.message ?? res.statusText;
    return { ok: false, status: res.status, data, error: { code, message, field: data?.error?.field ?? null } };
  }
  return {
    get: (path, query) => call("GET", path, { query }),
    send: (method, path, body, query) => call(method, path, { body, query }),
    /** CloudWatch's Query API (GetMetricData), as the session signs it: metrics.js. */
    metrics: (body) => session.metrics(body),
    /** Whether the session's role may change anything (support reads only). */
    get writes() { return session.role === "operator"; },
  };
}
