//! A game's bans listed page by page, and a player's bans in every game, over HTTP on
//! the local stack: each with its reason, operator and time, the same through the
//! support agents' `/admin/view/` twin, and gone from both once lifted.

use anyhow::Result;
use reqwest::Method;
use serde_json::{Value, json};

use crate::console::as_support;
use crate::support::{Stack, redis_url, unique};

fn game_name() -> String {
    let u = unique("gb");
    u[u.len().saturating_sub(30)..].to_owned()
}

/// Every page of `path` (a game's bans) `limit` at a time: the player ids in order and
/// how many pages it took.
async fn walk(stack: &Stack, path: &str, limit: u32) -> Result<(Vec<Value>, usize)> {
    let (mut bans, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
    loop {
        let at = cursor
            .as_ref()
            .map_or(String::new(), |c| format!("&cursor={c}"));
        let (status, page) = stack.get(&format!("{path}?limit={limit}{at}")).await?;
        anyhow::ensure!(status == 200, "{page}");
        pages += 1;
        bans.extend(page["bans"].as_array().unwrap().iter().cloned());
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return Ok((bans, pages));
        }
        anyhow::ensure!(pages < 20, "the pages never end");
    }
}

fn ids(bans: &[Value]) -> Vec<&str> {
    bans.iter()
        .map(|b| b["player_id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_games_bans_are_listed_page_by_page_and_a_players_in_every_game() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let (game, other) = (game_name(), game_name());
    let (status, body) = stack.get(&format!("/games/{game}/bans")).await?;
    assert_eq!(
        (status, body["bans"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{body}"
    );

    // Banned in an order unlike the list's (player ids), each for its own reason.
    let banned = ["p-5", "p-1", "p-4", "p-2", "p-3"];
    for p in banned {
        let why = json!({ "reason": format!("aimbot {p}") });
        let (status, reply) =
            (stack.call(Method::PUT, &format!("/games/{game}/bans/{p}"), Some(why))).await?;
        assert_eq!(status, 200, "{reply}");
    }
    let why = json!({ "reason": "chargeback" });
    let (status, _) =
        (stack.call(Method::PUT, &format!("/games/{other}/bans/p-3"), Some(why))).await?;
    assert_eq!(status, 200);

    let path = format!("/games/{game}/bans");
    let (bans, pages) = walk(&stack, &path, 2).await?;
    assert_eq!(ids(&bans), ["p-1", "p-2", "p-3", "p-4", "p-5"]);
    assert_eq!(pages, 3, "2, 2 and 1");
    for b in &bans {
        let p = b["player_id"].as_str().unwrap();
        assert_eq!(b["game"], game.as_str());
        assert_eq!(b["reason"], format!("aimbot {p}"));
        assert!(b["actor"].as_str().is_some_and(|a| !a.is_empty()), "{b}");
        assert!(b["at"].as_str().is_some_and(|t| t.ends_with('Z')), "{b}");
    }
    // The support agents' twin reads the same list, and a support agent reads it and
    // a player's bans, but not the operators' route, and lifts nothing.
    let (view, _) = walk(&stack, &format!("/admin/view/games/{game}/bans"), 50).await?;
    assert_eq!(view, bans);
    let support = async |method: Method, path: String| {
        let (status, body) = as_support(&stack, method, &path, json!({"reason": "x"})).await?;
        anyhow::Ok((status, body))
    };
    let (status, body) = support(Method::GET, format!("/admin/view/games/{game}/bans")).await?;
    assert_eq!(
        (status, body["bans"].as_array().map(Vec::len)),
        (200, Some(5)),
        "{body}"
    );
    let (status, _) = support(Method::GET, "/admin/players/p-1/bans".into()).await?;
    assert_eq!(status, 200);
    let (status, _) = support(Method::GET, format!("/games/{game}/bans")).await?;
    assert_eq!(status, 403);
    let (status, _) = support(Method::DELETE, format!("/games/{game}/bans/p-1")).await?;
    assert_eq!(status, 403);

    // A player's page: their bans in every game, by game.
    let (status, mine) = stack.get("/admin/players/p-3/bans").await?;
    assert_eq!(status, 200, "{mine}");
    let mut games: Vec<&str> = (mine["bans"].as_array().unwrap().iter())
        .map(|b| b["game"].as_str().unwrap())
        .filter(|g| *g == game || *g == other)
        .collect();
    games.sort_unstable();
    let mut want = [game.as_str(), other.as_str()];
    want.sort_unstable();
    assert_eq!(games, want);

    // Lifted: off the game's list and the player's.
    let why = json!({ "reason": "appeal won" });
    let (status, _) = (stack.call(
        Method::DELETE,
        &format!("/games/{game}/bans/p-3"),
        Some(why),
    ))
    .await?;
    assert_eq!(status, 200);
    let (bans, _) = walk(&stack, &path, 50).await?;
    assert_eq!(ids(&bans), ["p-1", "p-2", "p-4", "p-5"]);
    let (_, mine) = stack.get("/admin/players/p-3/bans").await?;
    let games: Vec<&str> = (mine["bans"].as_array().unwrap().iter())
        .map(|b| b["game"].as_str().unwrap())
        .filter(|g| *g == game || *g == other)
        .collect();
    assert_eq!(games, [other.as_str()]);

    // Bad paging is a 400 that names it.
    for (query, field) in [
        ("limit=0", Some("limit")),
        ("limit=201", Some("limit")),
        ("cursor=a~b", None),
    ] {
        let (status, body) = stack.get(&format!("{path}?{query}")).await?;
        assert_eq!(status, 400, "{query}: {body}");
        if let Some(f) = field {
            assert_eq!(body["error"]["field"], f, "{body}");
        } else {
            assert_eq!(body["error"]["code"], "invalid_cursor", "{body}");
        }
    }
    Ok(())
}
