//! Web games calling the API from a browser (docs/game-client.md, "Web games"): a page
//! on an origin the stack lists (`LB_CORS_ORIGINS`, the template's `CorsOrigins`) reads a
//! player's rank with the player's token, and reads `Retry-After` off a 429; the same
//! page on an origin not listed is refused by the browser itself. A real headless
//! Chromium, pages served on two loopback origins of their own.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::support::*;

/// A blank game page on a loopback origin of its own.
async fn game_page() -> Result<String> {
    let page = b"<!doctype html><title>a web game</title><p>game".to_vec();
    serve_static(vec![("/", "text/html", page)]).await
}

/// Waits until the page shows is the game page at `origin`, loaded.
async fn loaded(page: &mut Browser, origin: &str) -> Result<()> {
    let want = json!(format!("{origin} complete"));
    let now = "location.origin + ' ' + document.readyState";
    page.until(now, want, Duration::from_secs(10)).await?;
    Ok(())
}

/// Runs `start` (which sets `window.__out` when done) and waits for `window.__out`.
async fn outcome(page: &mut Browser, start: &str) -> Result<Value> {
    page.eval(&format!("window.__out = null; {start}; true"))
        .await?;
    let began = Instant::now();
    loop {
        let out = page.eval("window.__out").await?;
        if !out.is_null() {
            return Ok(out);
        }
        if began.elapsed() > Duration::from_secs(10) {
            bail!("no outcome of {start}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `fetch` of `url` with `authorization`, as a game's own code makes it: its status
/// and body, or the error the browser gave instead.
fn read(url: &str, authorization: &str) -> String {
    format!(
        "fetch({url:?}, {{headers: {{authorization: {authorization:?}}}}})\
         .then(async r => window.__out = {{status: r.status, body: await r.json()}},\
               e => window.__out = {{error: e.name}})"
    )
}

#[tokio::test]
async fn a_listed_origin_reads_with_a_players_token_and_any_other_is_refused_by_the_browser()
-> Result<()> {
    let (game, elsewhere) = (game_page().await?, game_page().await?);
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            env: &[
                (
                    "LB_CORS_ORIGINS",
                    &format!("https://play.example.invalid,{game}"),
                ),
                ("READS_PER_PLAYER_PER_S", "2"),
            ],
            ..Default::default()
        },
    )
    .await?;
    let lb = stack.create_board("cors").await?;
    stack.post_score(&lb, "ann", "m-1", 40).await?;
    let url = format!("{}/leaderboards/{lb}/players/ann/rank", stack.api);
    let token = bearer("ann");

    let mut page = Browser::open(&game, &stack.run_dir.join("chromium")).await?;
    loaded(&mut page, &game).await?;
    let out = outcome(&mut page, &read(&url, &token)).await?;
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(out["body"]["global_rank"], 1, "{out}");

    // Past the player's read rate: the 429's Retry-After is readable (exposed), so a
    // client library can wait it out.
    let burst = format!(
        "Promise.all(Array.from({{length: 8}}, () => fetch({url:?}, \
         {{headers: {{authorization: {token:?}}}}}).then(r => [r.status, r.headers.get('retry-after')])))\
         .then(v => window.__out = v)"
    );
    let answers = outcome(&mut page, &burst).await?;
    let limited: Vec<&Value> = answers
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a[0] == 429)
        .collect();
    assert!(!limited.is_empty(), "no 429 in {answers}");
    assert!(
        limited
            .iter()
            .all(|a| a[1].as_str().is_some_and(|s| s.parse::<u64>().is_ok())),
        "Retry-After not readable: {answers}"
    );

    // Another origin: the browser refuses the reply (no CORS header for it), and the
    // game's code sees a network error, not the rank.
    page.goto(&elsewhere).await?;
    let loaded = json!(format!("{elsewhere} complete"));
    page.until(
        "location.origin + ' ' + document.readyState",
        loaded,
        Duration::from_secs(10),
    )
    .await?;
    let out = outcome(&mut page, &read(&url, &token)).await?;
    assert_eq!(out, json!({"error": "TypeError"}), "{out}");
    Ok(())
}
