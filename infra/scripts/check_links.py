"""Fails on a path the docs name that does not exist: relative markdown links and
backticked repository paths in README.md and docs/*.md (run by infra/test.sh). And on
a gap in the code map (docs/architecture.md): every rule file, every file and folder of
a layer under shared/src/ and shared/core/src/, every function and every benchmark file must be named there.

Usage: check_links.py [ROOT]
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
TOP = ("infra/", "shared/", "functions/", "tests/", "bench/", "docs/", ".ci/")
FILES = ("template.yaml", "openapi.yaml", "Cargo.toml", "README.md")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE = re.compile(r"`([^`\s]+)`")


def named_paths(text):
    for m in LINK.finditer(text):
        target = m.group(1)
        if "://" not in target and not target.startswith("mailto:"):
            yield target, True
    for m in CODE.finditer(text):
        token = m.group(1).rstrip(".,:;")
        if token.startswith(TOP) or token in FILES:
            # Placeholders, globs and line or symbol suffixes are not paths.
            if any(c in token for c in "<>*{}$") or re.search(r":\d", token):
                continue
            yield token.split("::")[0], False


def map_gaps():
    """What docs/architecture.md should name and does not: each as a backticked path."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = {path.rstrip("/") for path, relative in named_paths(text) if not relative}
    need = [p for p in (ROOT / "shared/rules/src").glob("*.rs") if p.name != "lib.rs"]
    for layer in ("shared/src/adapters", "shared/src/edge", "shared/src/wiring",
                  "shared/core/src/memory", "shared/core/src/service", "shared/core/src/store"):
        need += [p for p in (ROOT / layer).iterdir() if p.name != "mod.rs"]
    need += [p for p in (ROOT / "functions").iterdir() if p.is_dir()]
    need += list((ROOT / "bench/src").glob("*.rs"))
    rel = sorted(str(p.relative_to(ROOT)) for p in need)
    return [r for r in rel if r not in named]


def main():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "infra" / "README.md"]
    missing = []
    for doc in docs:
        if not doc.exists():
            continue
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for path, relative in named_paths(line):
                # A link is relative to its document; a backticked path to the root.
                base = doc.parent if relative else ROOT
                if not (base / path).exists():
                    missing.append(f"{doc.relative_to(ROOT)}:{n}: {path}")
    for m in missing:
        print(m)
    gaps = map_gaps()
    for g in gaps:
        print(f"docs/architecture.md does not name {g}")
    if missing or gaps:
        sys.exit(f"{len(missing)} named paths do not exist; the code map misses {len(gaps)}")


if __name__ == "__main__":
    main()
