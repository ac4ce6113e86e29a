// CloudWatch's GetMetricData as the console calls it (the Query protocol: a form in,
// XML out), signed by the session: on AWS with the role's credentials, locally served by
// the stand-in beside the console (infra/local/monitoring.py). docs/console.md.

export const NAMESPACE = "Leaderboard";

/** A query of one metric: `id`, its `name`, its exact `dims` ({Game: "g"}: CloudWatch
 * treats each dimension set as a metric of its own), the statistic and period (s). */
export function metric(id, name, stat, dims = {}, period = 60) {
  return { id, name, stat, dims, period };
}

function form(queries, start, end) {
  const f = new URLSearchParams({ Action: "GetMetricData", Version: "2010-08-01",
    StartTime: start.toISOString(), EndTime: end.toISOString(), ScanBy: "TimestampAscending" });
  queries.forEach((q, i) => {
    const at = `MetricDataQueries.member.${i + 1}`;
    f.set(`${at}.Id`, q.id);
    f.set(`${at}.MetricStat.Metric.Namespace`, NAMESPACE);
    f.set(`${at}.MetricStat.Metric.MetricName`, q.name);
    Object.entries(q.dims).forEach(([k, v], j) => {
      f.set(`${at}.MetricStat.Metric.Dimensions.member.${j + 1}.Name`, k);
      f.set(`${at}.MetricStat.Metric.Dimensions.member.${j + 1}.Value`, v);
    });
    f.set(`${at}.MetricStat.Period`, String(q.period));
    f.set(`${at}.MetricStat.Stat`, q.stat);
  });
  return f.toString();
}

const texts = (el, tag) => [...(el.getElementsByTagName(tag)[0]?.getElementsByTagName("member") ?? [])]
  .map((m) => m.textContent);

/** The queries' datapoints from `start` to `end`: {ok, series: {id: [{at, value}]}} or
 * {ok: false, error: {code, message}} (CloudWatch's error, e.g. AccessDenied). At most
 * 500 queries (CloudWatch's limit); more would need a second call. */
export async function metricData(api, queries, start, end) {
  let res;
  try {
    res = await api.metrics(form(queries, start, end));
  } catch (e) {
    return { ok: false, error: { code: "network", message: String(e) } };
  }
  const doc = new DOMParser().parseFromString(await res.text(), "text/xml");
  if (!res.ok) {
    const code = doc.getElementsByTagName("Code")[0]?.textContent ?? `http_${res.status}`;
    const message = doc.getElementsByTagName("Message")[0]?.textContent ?? res.statusText;
    return { ok: false, error: { code, message } };
  }
  const series = {};
  const results = doc.getElementsByTagName("MetricDataResults")[0];
  for (const m of results ? [...results.children] : []) {
    const id = m.getElementsByTagName("Id")[0]?.textContent;
    const at = texts(m, "Timestamps");
    const values = texts(m, "Values").map(Number);
    series[id] = at.map((t, i) => ({ at: Date.parse(t), value: values[i] }));
  }
  return { ok: true, series };
}
