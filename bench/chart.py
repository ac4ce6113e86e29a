"""Draws bench/results/latest.png from latest.json: latency by operation, ours vs bare
Redis vs PostgreSQL, p50 and p99 on a log scale.

Usage: chart.py RESULTS.json OUT.png
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OPERATIONS = [
    ("rank_neighbours", "rank + 10 neighbours"),
    ("top_100", "top-100"),
    ("friends_500", "friends-rank (500)"),
    ("ingest_apply", "ingest apply"),
    ("projector_batch_100", "projector batch 100"),
    ("projector_batch_1000", "projector batch 1,000"),
]
SERIES = [("ours", "ours", "#1f77b4"), ("bare", "bare Redis", "#aaaaaa"), ("postgres", "PostgreSQL", "#d62728")]


def main(src, dst):
    with open(src) as f:
        results = json.load(f)
    lat = results["latency_us"]
    pg = results.get("postgres") or {}
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    for ax, pct in zip(axes, ("p50_us", "p99_us")):
        ys = range(len(OPERATIONS))
        height = 0.27
        for j, (key, label, colour) in enumerate(SERIES):
            values = []
            for op, _ in OPERATIONS:
                if key == "postgres":
                    values.append(pg.get(op, {}).get(pct, 0))
                else:
                    values.append(lat[op][key][pct])
            pos = [y + (j - 1) * height for y in ys]
            bars = ax.barh(pos, values, height, label=label, color=colour)
            for b, v in zip(bars, values):
                if v:
                    ax.text(v * 1.08, b.get_y() + b.get_height() / 2, f"{v:,.0f}", va="center", fontsize=7)
        ax.set_xscale("log")
        ax.set_xlim(right=max(v for v in ax.get_xlim()) * 4)
        ax.set_yticks(list(ys))
        ax.set_yticklabels([name for _, name in OPERATIONS])
        ax.invert_yaxis()
        ax.set_xlabel(f"{pct[:3]} latency, microseconds (log scale)")
        ax.grid(axis="x", which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    m = results["machine"]
    fig.suptitle(
        f"Leaderboard latency, {results['players']:,} players: ours vs bare Redis vs PostgreSQL\n"
        f"{m['cpus']} CPUs ({m['cpu_model']}), Redis {m['redis_version']}, {results['generated_at'][:19]}Z",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
