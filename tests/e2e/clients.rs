//! The client libraries against a local stack (docs/clients.md): the TypeScript client's
//! own tests (`clients/typescript/test/`, node's test runner, run on the build
//! `infra/test.sh` makes), every one of them run, none skipped; the C# client's
//! (`clients/csharp/Tests~/`, built with Mono's `mcs` as Unity's C# and run with `mono`);
//! the C++ client's (`clients/cpp/tests/`, built with CMake and the system compiler);
//! and the web game page
//! built on it (`clients/typescript/examples/web-game/`) in headless Chromium, served on
//! an origin of its own: signed in, it shows rank, neighbours, friends and the live top
//! and follows a posted result; on an origin the stack does not list, the browser
//! refuses the API's replies.

use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use serde_json::json;

use crate::support::{API_KEY, Browser, Stack, StackOptions, redis_url, root, serve_static};

/// Runs a client's own tests (`cmd`) against a fresh stack, its endpoints in the
/// environment; fails with their report unless they exit 0 and the report has every
/// line of `wants`. Prints the figures they report (`# live ...`) for --success-output.
async fn client_tests(mut cmd: tokio::process::Command, wants: &[&str]) -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let out = cmd
        .env("LB_API", &stack.api)
        .env("LB_EVENTS", &stack.events)
        .env("LB_SOCIAL", &stack.social)
        .env("LB_REALTIME", format!("{}/event/realtime", stack.realtime))
        .env("LB_API_KEY", API_KEY)
        // The stack's local SigV4 key pairs (infra/local/sigv4.py) and its region.
        .env("LB_REGION", "us-east-1")
        .env("LB_ADMIN_KEY", "AKIALOCALADMIN000000:local-admin-secret")
        .env(
            "LB_GAME_SERVER_KEY",
            "AKIALOCALGAMESERVER0:local-game-server-secret",
        )
        .output()
        .await
        .context("run the client's tests (infra/test.sh builds the client first)")?;
    let report = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success() && wants.iter().all(|w| report.contains(w)),
        "the client's tests failed or did not all run:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in report.lines().map(str::trim_start) {
        if line.starts_with("# live") {
            println!("{line}");
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_typescript_client_passes_its_tests_against_the_stack() -> Result<()> {
    let mut node = tokio::process::Command::new("node");
    node.args(["--test", "test/"])
        .current_dir(root().join("clients/typescript"));
    client_tests(node, &["# skipped 0", "# fail 0"]).await
}

#[tokio::test]
async fn the_csharp_client_passes_its_tests_against_the_stack_under_mono() -> Result<()> {
    let mut mono = tokio::process::Command::new("mono");
    mono.arg(root().join("clients/csharp/bin~/ClientTests.exe"));
    client_tests(mono, &["# pass 10, fail 0"]).await
}

#[tokio::test]
async fn the_cpp_client_passes_its_tests_against_the_stack() -> Result<()> {
    let tests = tokio::process::Command::new(root().join("clients/cpp/build/client_tests"));
    client_tests(tests, &["# pass 9, fail 0"]).await
}

/// The web game page and its bundle, served on an origin of their own.
async fn web_game() -> Result<String> {
    let dir = root().join("clients/typescript");
    let page =
        std::fs::read(dir.join("examples/web-game/index.html")).context("the web game page")?;
    let script = std::fs::read(dir.join("dist/web-game.js"))
        .context("dist/web-game.js (infra/test.sh builds the client)")?;
    serve_static(vec![
        ("/index.html", "text/html", page),
        ("/web-game.js", "text/javascript", script),
    ])
    .await
}

const STATUS: &str = "document.getElementById('status').textContent";
const FIRST_ON_TOP: &str = "document.querySelector('#top li')?.dataset.player ?? null";
const MY_RANK: &str = "document.getElementById('rank').textContent";

#[tokio::test]
async fn the_web_game_page_shows_a_players_board_live_on_a_listed_origin_only() -> Result<()> {
    let (game, elsewhere) = (web_game().await?, web_game().await?);
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            env: &[("LB_CORS_ORIGINS", &game)],
            ..Default::default()
        },
    )
    .await?;
    let lb = stack.create_board("webgame").await?;
    for (i, p) in ["ana", "ben", "cleo", "dev", "eli", "fay"]
        .iter()
        .enumerate()
    {
        stack.post_score(&lb, p, "m", 100 * (i as i64 + 1)).await?;
    }
    stack.post_score(&lb, "me", "m", 350).await?;
    stack.set_friends("me", &["ben", "fay"]).await?;
    let token = stack
        .http
        .get(format!("{}/demo/token?player=me&format=jwt", stack.events))
        .send()
        .await?
        .text()
        .await?;
    let query = format!(
        "api={}&realtime={}/event/realtime&board={lb}&player=me&token={}",
        stack.api,
        stack.realtime,
        token.trim()
    );

    let mut page = Browser::open(
        &format!("{game}/index.html?{query}"),
        &stack.run_dir.join("chromium"),
    )
    .await?;
    page.until(STATUS, json!("live"), Duration::from_secs(20))
        .await?;
    assert_eq!(page.eval(MY_RANK).await?, json!("4"));
    let near = "[...document.querySelectorAll('#near li')].map(li => li.dataset.player)";
    assert_eq!(
        page.eval(near).await?,
        json!(["eli", "dev", "me", "cleo", "ben"])
    );
    let friends = "[...document.querySelectorAll('#friends li')].map(li => li.dataset.player)";
    assert_eq!(page.eval(friends).await?, json!(["fay", "me", "ben"]));
    page.until(FIRST_ON_TOP, json!("fay"), Duration::from_secs(5))
        .await?;

    // A result posted by the game's server: the live top and the player's rank follow.
    stack.post_score(&lb, "rookie", "m", 900).await?;
    let took = page
        .until(FIRST_ON_TOP, json!("rookie"), Duration::from_secs(3))
        .await?;
    page.until(MY_RANK, json!("5"), Duration::from_secs(3))
        .await?;
    println!("web game page: a posted result on its live top in {took:?}");

    // The same page on an origin the stack does not list: refused by the browser.
    let mut other = Browser::open(
        &format!("{elsewhere}/index.html?{query}"),
        &stack.run_dir.join("chromium-elsewhere"),
    )
    .await?;
    other
        .until(
            STATUS,
            json!("TypeError: Failed to fetch"),
            Duration::from_secs(20),
        )
        .await?;
    assert_eq!(other.eval(MY_RANK).await?, json!("–"));
    Ok(())
}
