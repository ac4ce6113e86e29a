"""Fails on prose that drifted from what it describes (run by infra/test.sh):

- a reference to this project's tracker in docs, comments or scripts ("issue 38",
  "since issue 57", "the issue's bound"): the product's text speaks of the product; an
  external project's tracker (`heroiclabs/nakama issues 413`) is a source and stays;
- a figure a script computes, typed into a doc: docs/deploying.md must carry the line
  `infra/local/template_stats.py --summary` prints for template.yaml (functions and
  resources), given as the first argument (a file holding the line).

Usage: check_prose.py ROOT SUMMARY_FILE
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
SKIP = {".git", "target", "node_modules", ".venv", ".local", "obj", "bin", "dist"}
TEXT = {".md", ".rs", ".py", ".sh", ".js", ".mjs", ".ts", ".cs", ".toml", ".yaml", ".yml",
        ".cpp", ".hpp", ".h", ".lua", ".html", ".css"}
TRACKER = re.compile(r"\b(?:issues?\s+#?\d+|issue's|(?:the|this)\s+issue\b)", re.IGNORECASE)
EXTERNAL = re.compile(r"[\w.-]+/[\w.-]+\s+issues?\s+#?\d+", re.IGNORECASE)


def files():
    stack = [ROOT]
    while stack:
        here = stack.pop()
        for p in sorted(here.iterdir()):
            if p.is_dir():
                if p.name not in SKIP:
                    stack.append(p)
            elif p.suffix in TEXT or p.name in {"Makefile", "CMakeLists.txt"}:
                yield p


def tracker_references():
    # This check and its tests name what they look for.
    own = {pathlib.Path(__file__).resolve(), pathlib.Path(__file__).resolve().with_name("test_checks.py")}
    for path in files():
        if path.resolve() in own:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        # Prose wraps: a reference may straddle a line break.
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            joined = line + " " + (lines[n].lstrip(" #/!*-") if n < len(lines) else "")
            for m in TRACKER.finditer(joined):
                if m.start() >= len(line):
                    continue
                if EXTERNAL.search(joined[max(0, m.start() - 60):m.end()]):
                    continue
                yield f"{path.relative_to(ROOT)}:{n}: {line.strip()}"


def main():
    problems = list(tracker_references())
    if len(sys.argv) > 2:
        summary = pathlib.Path(sys.argv[2]).read_text().strip()
        deploying = (ROOT / "docs" / "deploying.md").read_text()
        if summary not in " ".join(deploying.split()):
            problems.append(f"docs/deploying.md does not carry template_stats.py's line: {summary}")
    for p in problems:
        print(p)
    if problems:
        sys.exit(f"{len(problems)} places in the prose drifted (above)")


if __name__ == "__main__":
    main()
