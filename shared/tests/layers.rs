//! The layers, held by path (docs/architecture.md): each imports only the ones below it.
//! The compiler holds the crates' floors (`leaderboard-core` cannot name an adapter; the
//! dependency check below keeps it that way); this holds the folders within them, where
//! the compiler would let any module name any other. Comments and test modules are not
//! read: a doc link or a test may name what the code may not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `shared/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("shared/ has a parent")
        .to_owned()
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a source folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code of a file: comment lines dropped, and nothing from its first test module on
/// (`#[cfg(test)]`; a file's tests sit at its end or in a `tests.rs` of their own).
fn code(path: &Path) -> Vec<(usize, String)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return Vec::new();
    }
    let text = std::fs::read_to_string(path).expect("a readable source file");
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_owned()))
        .collect()
}

/// `(layer folder, paths its code may not name)`, relative to the repository.
const RULES: &[(&str, &[&str])] = &[
    // The ports: no use case above them, no twin.
    (
        "shared/core/src/store",
        &["crate::service", "crate::memory"],
    ),
    // The use cases: never the twins (those are for tests).
    ("shared/core/src/service", &["crate::memory"]),
    // The adapters implement ports; they call no use case, edge or wiring.
    (
        "shared/src/adapters",
        &["leaderboard_core::service", "crate::edge", "crate::wiring"],
    ),
    // The edge decodes and replies; the wiring builds it, not the other way.
    ("shared/src/edge", &["crate::wiring"]),
];

#[test]
fn no_layer_names_a_layer_above_it() {
    let root = root();
    let mut found = Vec::new();
    for (folder, banned) in RULES {
        let files = sources(&root.join(folder));
        assert!(
            !files.is_empty(),
            "{folder} holds no source: the rule is stale"
        );
        for file in files {
            for (line, text) in code(&file) {
                for path in *banned {
                    if text.contains(path) {
                        let at = file.strip_prefix(&root).unwrap_or(&file).display();
                        found.push(format!("{at}:{line} names {path}: {}", text.trim()));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "layers crossed:\n{}", found.join("\n"));
}

#[test]
fn the_crates_root_re_exports_nothing() {
    // A re-export at the root would let `crate::redis` hide that it is an adapter.
    for lib in ["shared/src/lib.rs", "shared/core/src/lib.rs"] {
        let path = root().join(lib);
        let uses: Vec<_> = code(&path)
            .into_iter()
            .filter(|(_, l)| l.trim_start().starts_with("pub use"))
            .collect();
        assert!(uses.is_empty(), "{lib} re-exports: {uses:?}");
    }
}

/// The crates `leaderboard-core` may not depend on, even through another crate.
const BACKEND_CRATES: &[&str] = &[
    "aws-config",
    "aws-sdk-",
    "aws-smithy-",
    "aws_lambda_events",
    "lambda_runtime",
    "redis",
    "reqwest",
    "serde_dynamo",
    "metrics_cloudwatch_embedded",
];

#[test]
fn the_core_crate_depends_on_no_aws_redis_or_lambda_crate() {
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["tree", "--locked", "--offline", "-p", "leaderboard-core"])
        .args(["-e", "normal", "--prefix", "none", "--format", "{p}"])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.contains("leaderboard-rules"), "{tree}");
    let backends: Vec<&str> = tree
        .lines()
        .filter(|l| BACKEND_CRATES.iter().any(|c| l.starts_with(c)))
        .collect();
    assert!(
        backends.is_empty(),
        "leaderboard-core depends on {backends:?}"
    );
}

/// A module's path in its crate (`service::ingest::write`) from its file.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The modules of the crate at `src` that each module's code names (`crate::a::b`,
/// `super::c`), each path cut to the longest module that exists; a module's own parent
/// or child is not counted (a folder's `mod.rs` declares its files).
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = sources(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let here = module_of(src, file);
        let text: String = code(file).into_iter().map(|(_, l)| l + "\n").collect();
        let mut targets = BTreeSet::new();
        for (at, _) in text
            .match_indices("crate::")
            .chain(text.match_indices("super::"))
        {
            if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut segs: Vec<&str> = text[at..]
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or_default()
                .split("::")
                .filter(|s| !s.is_empty())
                .collect();
            // `crate::` starts at the root; each `super::` goes up one from this module.
            let mut path: Vec<String> = if segs[0] == "crate" {
                segs.remove(0);
                Vec::new()
            } else {
                here.clone()
            };
            while segs.first() == Some(&"super") {
                segs.remove(0);
                path.pop();
            }
            path.extend(segs.iter().map(|s| (*s).to_owned()));
            while !path.is_empty() && !modules.contains(&path) {
                path.pop();
            }
            let related = path.starts_with(&here) || here.starts_with(&path);
            if !path.is_empty() && !related {
                targets.insert(path.join("::"));
            }
        }
        graph.insert(here.join("::"), targets);
    }
    graph
}

/// A circle of imports in `graph`, if there is one (depth-first, by module name).
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        node: &'a str,
        trail: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = trail.iter().position(|n| *n == node) {
            return Some(trail[at..].iter().map(|n| (*n).to_owned()).collect());
        }
        if !done.insert(node) {
            return None;
        }
        trail.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(graph, next, trail, done) {
                return Some(found);
            }
        }
        trail.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

#[test]
fn no_file_of_a_crate_imports_in_a_circle() {
    for src in ["shared/rules/src", "shared/core/src", "shared/src"] {
        let graph = imports(&root().join(src));
        assert!(graph.len() > 20, "{src}: {} modules read", graph.len());
        assert_eq!(circle(&graph), None, "{src}: modules importing in a circle");
    }
}

/// `graph` seen from its folders: each module cut to its first `depth` segments
/// (`service::write::commit` is `service::write` at 2), a folder's own files dropped.
fn folders(
    graph: &BTreeMap<String, BTreeSet<String>>,
    depth: usize,
) -> BTreeMap<String, BTreeSet<String>> {
    let cut = |m: &str| m.split("::").take(depth).collect::<Vec<_>>().join("::");
    let mut folded: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in graph {
        let entry = folded.entry(cut(from)).or_default();
        entry.extend(targets.iter().map(|t| cut(t)).filter(|t| *t != cut(from)));
    }
    folded
}

#[test]
fn no_folder_of_a_crate_imports_in_a_circle() {
    for src in ["shared/rules/src", "shared/core/src", "shared/src"] {
        let graph = folders(&imports(&root().join(src)), 2);
        assert_eq!(circle(&graph), None, "{src}: folders importing in a circle");
    }
}

/// The write path's stages (`service/write/`, docs/architecture.md), in their order.
const STAGES: &[&str] = &["prepare", "decide", "commit", "place"];
/// What the stages pass: the only siblings a stage may name.
const STAGE_VALUES: &[&str] = &["request", "reply"];
/// The use cases that drive the stages, above them.
const DRIVERS: &[&str] = &[
    "ingest",
    "scores",
    "tournaments",
    "integrity",
    "stream_ingest",
];

#[test]
fn the_write_stages_name_no_other_stage_and_nothing_that_drives_them() {
    let graph = imports(&root().join("shared/core/src"));
    let stage = |m: &str| format!("service::write::{m}");
    for name in STAGES {
        let targets = &graph[&stage(name)];
        let siblings: Vec<_> = targets
            .iter()
            .filter_map(|t| t.strip_prefix("service::write::"))
            .filter(|t| !STAGE_VALUES.contains(t))
            .collect();
        assert!(siblings.is_empty(), "stage {name} names {siblings:?}");
    }
    for (module, targets) in graph.range("service::write".to_owned()..) {
        if !module.starts_with("service::write") {
            break;
        }
        let above: Vec<_> = targets
            .iter()
            .filter(|t| {
                DRIVERS
                    .iter()
                    .any(|d| t.starts_with(&format!("service::{d}")))
            })
            .collect();
        assert!(above.is_empty(), "{module} names {above:?}, which drive it");
    }
    // The values are leaves of the write path: they name no stage.
    for name in STAGE_VALUES {
        let stages: Vec<_> = (graph[&stage(name)].iter())
            .filter(|t| STAGES.iter().any(|s| **t == stage(s)))
            .collect();
        assert!(stages.is_empty(), "{name} names {stages:?}");
    }
}

/// Lines a Rust file outside the tests may have before it is long (docs/architecture.md).
const LONG: usize = 400;

/// The files that are longer now, each at most as long as it is: none may grow, and no
/// other may pass [`LONG`]. A file split or shortened comes off the list (or its figure
/// goes down); the list never grows.
const LONG_NOW: &[(&str, usize)] = &[
    ("bench/src/cost.rs", 630),
    ("shared/src/adapters/dynamodb/tournaments.rs", 516),
    ("shared/rules/src/schedule.rs", 509),
    ("shared/src/adapters/redis/calls.rs", 493),
    ("shared/src/adapters/dynamodb/items.rs", 479),
    ("shared/core/src/service/seal/mod.rs", 448),
    ("shared/core/src/service/live.rs", 424),
    ("bench/src/markdown.rs", 405),
    ("shared/src/adapters/dynamodb/mod.rs", 404),
];

#[test]
fn no_file_outside_the_tests_grows_long() {
    let root = root();
    let allowed: BTreeMap<&str, usize> = LONG_NOW.iter().copied().collect();
    let mut long = Vec::new();
    for top in ["shared", "functions", "bench"] {
        for path in sources(&root.join(top)) {
            let rel = path.strip_prefix(&root).expect("under the root");
            let rel = rel.to_string_lossy().replace('\\', "/");
            let name = rel.rsplit('/').next().unwrap_or_default();
            if rel.contains("/tests/") || name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            let lines = text.lines().count();
            let limit = allowed.get(rel.as_str()).copied().unwrap_or(LONG);
            if lines > limit {
                long.push(format!("{rel}: {lines} lines (at most {limit})"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files grown long: split them by what they do, as the write path's stages are \
         split ({} may pass {LONG} lines, none may grow):\n{}",
        LONG_NOW.len(),
        long.join("\n")
    );
}

// The list of long files never grows past the ten it had when the guard was set.
const _: () = assert!(LONG_NOW.len() <= 10);
