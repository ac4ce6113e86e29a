//! The live demo page the local stack serves, in a real headless Chromium (from apt),
//! driven over the DevTools protocol: a posted score shows on the page within a second.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::json;

use crate::support::*;

const FIRST_ON_TOP: &str = "document.querySelector('#top tbody tr')?.dataset.player ?? null";
/// What the top row shows of its player: name and country.
const FIRST_NAME: &str = "(r => r && [r.querySelector('.name')?.textContent ?? null, \
     r.querySelector('.cc')?.textContent ?? null])(document.querySelector('#top tbody tr td.player'))";

#[tokio::test]
async fn a_posted_score_shows_on_the_demo_page_within_a_second() -> Result<()> {
    let (stack, lb) = Stack::with_board("demo").await?;
    let names = [
        "ana", "ben", "cleo", "dev", "eli", "fay", "gus", "hana", "ivan", "jo", "kim", "lou",
    ];
    for (i, p) in names.iter().enumerate() {
        stack.post_score(&lb, p, "m", 900 + 25 * i as i64).await?;
    }
    stack.post_score(&lb, "me", "m", 1_010).await?;
    let profile = stack.run_dir.join("chromium");
    let url = format!("{}/demo/?board={lb}&player=me", stack.events);
    let mut page = Browser::open(&url, &profile).await?;
    page.until(
        "document.getElementById('status').textContent",
        json!("live"),
        Duration::from_secs(20),
    )
    .await?;
    let shown = page
        .eval("document.querySelector('.views').innerText")
        .await?;
    assert_eq!(page.eval(FIRST_ON_TOP).await?, json!("lou"), "{shown}");
    assert_eq!(
        page.eval("document.querySelector('#near tr.me td.rank').textContent")
            .await?,
        json!("8"),
        "{shown}"
    );

    let mut took = Vec::new();
    for (i, p) in ["rookie", "comet", "ace"].iter().enumerate() {
        let sent = Instant::now();
        stack.post_score(&lb, p, "m", 2_000 + i as i64).await?;
        page.until(FIRST_ON_TOP, json!(p), Duration::from_secs(3))
            .await?;
        took.push(sent.elapsed());
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    // The player's own neighbourhood follows too, with what happened to them.
    stack.post_score(&lb, "eli", "m2", 1_020).await?;
    page.until(
        "document.querySelector('#notices li')?.textContent ?? null",
        json!("Overtaken by eli: now #12 (was #11)"),
        Duration::from_secs(3),
    )
    .await?;
    // Names: the top player names themself, then renames; each shows with the next
    // push, and a name is text, never markup.
    assert_eq!(page.eval(FIRST_NAME).await?, json!(["ace", null]));
    for (name, shown) in [
        (
            json!({"display_name": "Ace <b>High</b>", "country": "SE"}),
            json!(["Ace <b>High</b>", "SE"]),
        ),
        (
            json!({"display_name": "Ace", "country": "JP"}),
            json!(["Ace", "JP"]),
        ),
    ] {
        let (status, reply) = stack
            .call(reqwest::Method::PUT, "/players/ace/profile", Some(name))
            .await?;
        assert_eq!(status, 200, "{reply}");
        page.until(FIRST_NAME, shown, Duration::from_secs(3))
            .await?;
    }
    assert_eq!(
        page.eval("document.querySelectorAll('#top b').length")
            .await?,
        json!(0),
        "a name was read as markup"
    );
    println!("demo page: a posted score on the page after {took:?}");
    assert!(
        took.iter().all(|t| *t <= Duration::from_secs(1)),
        "slower than a second: {took:?}"
    );

    let png = page.screenshot().await?;
    std::fs::write(stack.run_dir.join("live-demo.png"), &png)?;
    if let Ok(path) = std::env::var("LB_DEMO_SCREENSHOT") {
        std::fs::write(path, &png)?;
    }
    Ok(())
}
