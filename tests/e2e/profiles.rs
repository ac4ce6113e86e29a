//! Names on rows: every read shows each row's current card, from the copy
//! the index keeps beside the board (single node and cluster) or from DynamoDB when
//! Redis cannot answer; a rename shows in the next read; a fill never wins over a
//! newer rename; hostile profiles are refused with nothing stored; erasure empties the
//! profile.

use leaderboard_core::store::CardCopies;
use std::time::Duration;

use anyhow::Result;
use leaderboard::adapters::dynamodb::DynamoScoreStore;
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard::wiring::AppContext;
use leaderboard_core::memory::MemoryBroadcasts;
use leaderboard_core::service::Context;
use leaderboard_core::service::live;
use leaderboard_core::service::profiles::{self, Writer};
use leaderboard_core::service::reads::{self, Entry, PageStart};
use leaderboard_core::service::seal;
use leaderboard_core::store::{StreamBatch, VersionedCard};
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::RankMode;
use leaderboard_rules::profile::{Card, ProfileBody};
use reqwest::Method;
use serde_json::json;

use leaderboard_core::service::projector::project;
use leaderboard_core::service::repair::Reporter;

use crate::on_both_topologies;
use crate::support::{
    Stack, TestEnv, batch, cluster_url, dynamodb_url, player, redis_url, uncached,
};

fn named(name: &str, country: &str) -> ProfileBody {
    ProfileBody {
        display_name: Some(name.into()),
        country: Some(country.into()),
        avatar: Some(format!("avatars/{}", name.to_lowercase().replace(' ', "-"))),
        attributes: None,
    }
}

/// (player, display name) of each row.
fn names(rows: &[Entry]) -> Vec<(String, Option<String>)> {
    rows.iter()
        .map(|r| (r.player_id.clone(), r.card.display_name.clone()))
        .collect()
}

fn want(rows: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    rows.iter()
        .map(|(p, n)| (p.to_string(), n.map(str::to_owned)))
        .collect()
}

/// A board of four with names on two (`a` is "Ada", `c` is "Cy"); `b` and `d` have none.
async fn four_named(env: &TestEnv) -> Result<LeaderboardId> {
    let lb = env.board(Policy::Best).await;
    for (p, s) in [("a", 40), ("b", 30), ("c", 20), ("d", 10)] {
        env.submit(&lb, p, "m1", s).await?;
    }
    profiles::put(&env.ctx, &player("a"), named("Ada", "SE"), Writer::Server).await?;
    profiles::put(&env.ctx, &player("c"), named("Cy", "JP"), Writer::Server).await?;
    Ok(lb)
}

/// Every read of the four, each row named as `expect` says (rank reads around `c`).
async fn every_read_names(
    ctx: &AppContext,
    lb: &LeaderboardId,
    expect: &[(&str, Option<&str>)],
    source: reads::Source,
) -> Result<()> {
    let all = want(expect);
    let top = reads::top(ctx, lb, 10, RankMode::Unique).await?;
    assert_eq!(names(&top.entries), all, "top");
    assert_eq!(top.meta.source, source);
    assert!(!top.meta.names_missing);
    let p = player("c");
    let rank = reads::rank(ctx, &Default::default(), lb, &p, 1, RankMode::Unique).await?;
    assert_eq!(names(&rank.neighbors), all[1..4].to_vec(), "rank");
    assert_eq!(rank.neighbors[1].card.country.as_deref(), Some("JP"));
    let avatar = expect[2].1.map(|n| format!("avatars/{}", n.to_lowercase()));
    assert_eq!(rank.neighbors[1].card.avatar, avatar);
    let signer = leaderboard_rules::cursor::CursorSigner::new("t");
    let first = reads::ranks_from(ctx, &signer, lb, PageStart::Top, 2, RankMode::Unique).await?;
    assert_eq!(names(&first.entries), all[..2].to_vec(), "first page");
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = reads::ranks(ctx, &signer, lb, Some(&cursor), 2, RankMode::Unique).await?;
    assert_eq!(names(&second.entries), all[2..].to_vec(), "second page");
    let from_rank =
        reads::ranks_from(ctx, &signer, lb, PageStart::Rank(3), 2, RankMode::Unique).await?;
    assert_eq!(names(&from_rank.entries), all[2..].to_vec(), "from rank 3");
    let list = [player("d"), player("a")];
    let rows = reads::entries(ctx, lb, &list, RankMode::Unique).await?;
    let listed = vec![all[0].clone(), all[3].clone()];
    assert_eq!(names(&rows.entries), listed, "entries");
    Ok(())
}

async fn every_read_names_its_rows_and_a_rename_at_once(redis: &str) -> Result<()> {
    let env = TestEnv::on(redis).await;
    let lb = four_named(&env).await?;
    let source = reads::Source::Redis;
    let before = [
        ("a", Some("Ada")),
        ("b", None),
        ("c", Some("Cy")),
        ("d", None),
    ];
    every_read_names(&env.ctx, &lb, &before, source).await?;
    // A second read is served from the copies the first one filled: the same names.
    every_read_names(&env.ctx, &lb, &before, source).await?;
    profiles::put(&env.ctx, &player("c"), named("Cyd", "JP"), Writer::Server).await?;
    profiles::put(&env.ctx, &player("d"), named("Dee", "US"), Writer::Server).await?;
    let after = [
        ("a", Some("Ada")),
        ("b", None),
        ("c", Some("Cyd")),
        ("d", Some("Dee")),
    ];
    every_read_names(&env.ctx, &lb, &after, source).await?;

    // Redis not answering: the rows come from DynamoDB, and so do their names.
    let down = env.redis_away().await?;
    every_read_names(&down, &lb, &after, reads::Source::Dynamodb).await?;
    Ok(())
}

on_both_topologies!(every_read_names_its_rows_and_a_rename_at_once);

/// The test's table and Redis keys through a context that reuses a top window's cards
/// for `card_ttl` (the reply cache off, so every read reaches Redis).
fn holding_cards(env: &TestEnv, card_ttl: Duration) -> Result<AppContext> {
    let store = DynamoScoreStore::new(env.ctx.store.client().clone(), env.ctx.store.table());
    let index = RedisRankIndex::new(&redis_url(), &env.prefix, Duration::from_secs(2))?;
    let settings = leaderboard_core::service::Settings {
        card_cache_ttl: card_ttl,
        ..uncached()
    };
    Ok(Context::new(store, index, settings))
}

async fn top_names(ctx: &AppContext, lb: &LeaderboardId) -> Result<Vec<(String, Option<String>)>> {
    Ok(names(
        &reads::top(ctx, lb, 4, RankMode::Unique).await?.entries,
    ))
}

#[tokio::test]
async fn a_top_read_reuses_its_windows_cards_only_for_the_card_ttl_and_never_past_a_move()
-> Result<()> {
    let env = TestEnv::new().await;
    let lb = four_named(&env).await?;
    let long = holding_cards(&env, Duration::from_secs(60))?;
    let short = holding_cards(&env, Duration::from_millis(300))?;
    let cy = [
        ("a", Some("Ada")),
        ("b", None),
        ("c", Some("Cy")),
        ("d", None),
    ];
    assert_eq!(top_names(&long, &lb).await?, want(&cy));
    assert_eq!(top_names(&short, &lb).await?, want(&cy));
    profiles::put(&env.ctx, &player("c"), named("Cyd", "JP"), Writer::Server).await?;
    // The window has not moved: the long holder reuses the cards it read with it...
    assert_eq!(top_names(&long, &lb).await?, want(&cy));
    // ...and the short one reads them again once its copy is older than its TTL.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let cyd = [
        ("a", Some("Ada")),
        ("b", None),
        ("c", Some("Cyd")),
        ("d", None),
    ];
    assert_eq!(top_names(&short, &lb).await?, want(&cyd));
    // A result that moves the window brings its cards with it, whatever the TTL.
    env.submit(&lb, "d", "m2", 25).await?;
    let moved = [
        ("a", Some("Ada")),
        ("b", None),
        ("d", None),
        ("c", Some("Cyd")),
    ];
    assert_eq!(top_names(&long, &lb).await?, want(&moved));
    Ok(())
}

/// A rename as the table's stream brings it to the live publisher.
async fn renamed(env: &TestEnv, p: &str, name: &str) -> Result<StreamBatch> {
    let reply = profiles::put(&env.ctx, &player(p), named(name, "SE"), Writer::Server).await?;
    Ok(StreamBatch {
        cards: vec![(
            player(p),
            VersionedCard {
                version: reply.version,
                card: reply.card,
            },
        )],
        card_sequence_numbers: vec![Some(format!("rename-{p}"))],
        ..StreamBatch::default()
    })
}

#[tokio::test]
async fn on_a_cluster_a_rename_pushes_the_watched_views_that_show_the_player_and_no_other()
-> Result<()> {
    let env = TestEnv::on(&cluster_url()).await;
    let lb = four_named(&env).await?;
    let top = live::watch_top(&env.ctx, &lb, 2).await?;
    let shown = |rows: &leaderboard_rules::live::Rows| -> Vec<(String, Option<String>)> {
        rows.entries
            .iter()
            .map(|r| (r.player_id.clone(), r.card.display_name.clone()))
            .collect()
    };
    assert_eq!(
        shown(&top.push.rows),
        want(&[("a", Some("Ada")), ("b", None)])
    );
    let out = MemoryBroadcasts::default();
    let (retry, stats) = live::publish(&env.ctx, &out, renamed(&env, "b", "Bee").await?).await;
    assert!(retry.is_empty(), "{stats:?}");
    assert_eq!((stats.pushed, stats.failed), (1, 0), "{stats:?}");
    let sent = out.sent();
    let push: leaderboard_rules::live::Push = serde_json::from_str(&sent[0].1)?;
    assert_eq!(
        shown(&push.rows),
        want(&[("a", Some("Ada")), ("b", Some("Bee"))])
    );
    assert_eq!(push.previous, top.push.version);
    // d is not in the view: its rename is looked at and left.
    let (_, stats) = live::publish(&env.ctx, &out, renamed(&env, "d", "Dee").await?).await;
    assert_eq!((stats.pushed, stats.unchanged), (0, 1), "{stats:?}");
    assert_eq!(out.sent().len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_card_copy_keeps_the_newest_version_and_another_history_counts_as_none() -> Result<()> {
    let mut env = TestEnv::new().await;
    let p = player("v");
    let card = |name: &str, version| VersionedCard {
        version,
        card: Card {
            display_name: Some(name.into()),
            ..Card::default()
        },
    };
    let index = &env.ctx.index;
    index.put_cards(&[(p.clone(), card("two", 2))]).await?;
    // A reader's fill from an older read of DynamoDB comes late: it loses.
    index.put_cards(&[(p.clone(), card("one", 1))]).await?;
    assert_eq!(
        index.cards(std::slice::from_ref(&p)).await?,
        vec![Some(card("two", 2))]
    );
    index.put_cards(&[(p.clone(), card("three", 3))]).await?;
    assert_eq!(
        index.cards(std::slice::from_ref(&p)).await?,
        vec![Some(card("three", 3))]
    );
    // A copy written on another replication history (a restart, a failover) may lack a
    // newer rename, and a copy this code cannot read (another format, on this history)
    // is no better: each counts as none, and any version replaces it.
    let key = format!("{}pf:v", env.prefix);
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query_async(&mut env.redis)
        .await?;
    let lineage = info
        .lines()
        .find_map(|l| l.strip_prefix("master_replid:"))
        .expect("a replication id")
        .trim();
    let foreign = "0123abcd|9\u{1f}stale\u{1f}\u{1f}".to_owned();
    let unreadable = format!("{lineage}|5|{{\"display_name\":\"old\"}}");
    for raw in [foreign, unreadable] {
        let _: () = redis::cmd("SET")
            .arg(&key)
            .arg(&raw)
            .query_async(&mut env.redis)
            .await?;
        assert_eq!(
            index.cards(std::slice::from_ref(&p)).await?,
            vec![None],
            "{raw}"
        );
        index.put_cards(&[(p.clone(), card("fresh", 1))]).await?;
        assert_eq!(
            index.cards(std::slice::from_ref(&p)).await?,
            vec![Some(card("fresh", 1))],
            "{raw}"
        );
    }
    let ttl: i64 = redis::cmd("TTL")
        .arg(&key)
        .query_async(&mut env.redis)
        .await?;
    assert!(ttl > 0, "a copy expires when unread: {ttl}");
    Ok(())
}

#[tokio::test]
async fn profiles_over_http_refuse_hostile_input_show_in_the_top_and_go_with_an_erasure()
-> Result<()> {
    let (stack, lb) = Stack::with_board("names").await?;
    stack.post_score(&lb, "ada", "m1", 50).await?;
    stack.post_score(&lb, "bob", "m1", 40).await?;
    let path = "/players/ada/profile";
    let blob = "x".repeat(2048);
    let hostile = [
        (json!({"display_name": "n".repeat(33)}), "display_name"),
        (json!({"display_name": "bell\u{7}"}), "display_name"),
        (json!({"display_name": "evil\u{202e}txt"}), "display_name"),
        (json!({"display_name": " padded"}), "display_name"),
        (json!({"country": "XX"}), "country"),
        (json!({"country": "se"}), "country"),
        (json!({"attributes": {"blob": blob}}), "attributes"),
        (json!({"avatar": "http://cdn.example.com/a.png"}), "avatar"),
        (
            json!({"avatar": "https://user:pw@cdn.example.com/a.png"}),
            "avatar",
        ),
    ];
    for (body, field) in hostile {
        let (status, reply) = stack.call(Method::PUT, path, Some(body.clone())).await?;
        assert_eq!(status, 400, "{body}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(field), "{body}: {message}");
    }
    let (_, nothing) = stack.get(path).await?;
    let none = (nothing["version"].as_u64(), &nothing["display_name"]);
    assert_eq!(none, (Some(0), &json!(null)), "{nothing}");

    let good = json!({"display_name": "Ada Lovelace", "avatar": "https://cdn.example.com/ada.png",
                      "country": "GB", "attributes": {"level": 12}});
    let (status, stored) = stack.call(Method::PUT, path, Some(good)).await?;
    assert_eq!(status, 200, "{stored}");
    let (_, top) = stack.get(&format!("/leaderboards/{lb}/top?n=10")).await?;
    assert_eq!(top["entries"][0]["display_name"], "Ada Lovelace");
    assert_eq!(top["entries"][0]["country"], "GB");
    assert_eq!(
        top["entries"][1]["display_name"],
        json!(null),
        "bob has no profile"
    );

    stack.erase_player("ada").await?;
    let (_, after) = stack.get(path).await?;
    assert_eq!(after["display_name"], json!(null), "{after}");
    assert_eq!(after["attributes"], json!(null), "{after}");
    assert!(after["version"].as_u64() > Some(1), "{after}");
    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    let cards = env.ctx.index.cards(&[player("ada")]).await?;
    assert!(
        cards[0].as_ref().is_none_or(|c| c.card.is_empty()),
        "{cards:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_rename_the_write_through_missed_reaches_the_index_from_the_stream() -> Result<()> {
    let env = TestEnv::new().await;
    let lb = four_named(&env).await?;
    // The rename lands in DynamoDB while Redis is away: its write-through fails.
    let away = env.redis_away().await?;
    profiles::put(&away, &player("a"), named("Ada II", "SE"), Writer::Server).await?;
    let held = env.ctx.index.cards(&[player("a")]).await?;
    assert_eq!(
        held[0]
            .as_ref()
            .and_then(|c| c.card.display_name.as_deref()),
        Some("Ada")
    );
    // The projector copies the card from the profile's stream record, version-checked:
    // replaying the whole stream (older versions included) leaves the newest.
    let batch = batch(env.stream_records().await);
    assert!(batch.cards.len() >= 3, "{:?}", batch.cards);
    let (retry, _) = project(&env.ctx.index, &Reporter::default(), batch).await;
    assert!(retry.is_empty());
    let top = reads::top(&env.ctx, &lb, 1, RankMode::Unique).await?;
    assert_eq!(top.entries[0].card.display_name.as_deref(), Some("Ada II"));
    Ok(())
}

#[tokio::test]
async fn sealed_results_and_history_show_the_current_name() -> Result<()> {
    let env = TestEnv::new().await;
    let board = crate::seal::closed_window(&env, true).await?;
    let lb = &board.leaderboard_id;
    env.seed_standings(lb, 5).await?;
    let store = &env.ctx.store;
    let events = leaderboard_core::memory::MemoryEvents::default();
    let settle = seal::SealSettings {
        settle: Duration::ZERO,
    };
    let far = std::time::Instant::now() + Duration::from_secs(60);
    while !seal::seal(store, &events, settle, lb, far).await?.done {}
    let star = player("s00003");
    profiles::put(&env.ctx, &star, named("Star", "BR"), Writer::Server).await?;
    profiles::put(&env.ctx, &star, named("Superstar", "BR"), Writer::Server).await?;
    let results = seal::results(store, lb).await?;
    let shown: Vec<_> = results
        .entries
        .iter()
        .map(|e| (e.player_id.clone(), e.card.display_name.clone()))
        .collect();
    assert_eq!(shown.len(), 5);
    for (p, name) in &shown {
        let want = (p.as_ref() == Some(&star)).then(|| "Superstar".to_owned());
        assert_eq!(name, &want, "{p:?}");
    }
    let w = board.window.as_ref().expect("a window");
    let req = seal::HistoryRequest::parse(&w.game, &w.mode, star.as_str(), None, None, None, None)?;
    let history = seal::history(store, req).await?;
    assert_eq!(history.card.display_name.as_deref(), Some("Superstar"));
    assert_eq!(history.card.country.as_deref(), Some("BR"));
    assert_eq!(history.windows.len(), 1);
    Ok(())
}

/// The players `GET /admin/players` finds for `prefix`, every page of `limit` read.
async fn found(stack: &Stack, prefix: &str, limit: u32) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let mut url = reqwest::Url::parse("http://x/admin/players")?;
        url.query_pairs_mut()
            .append_pair("name_prefix", prefix)
            .append_pair("limit", &limit.to_string());
        if let Some(c) = &cursor {
            url.query_pairs_mut().append_pair("cursor", c);
        }
        let (status, page) = stack
            .get(&format!("{}?{}", url.path(), url.query().unwrap_or("")))
            .await?;
        anyhow::ensure!(status == 200, "{prefix}: {status} {page}");
        for p in page["players"].as_array().into_iter().flatten() {
            let name = p["display_name"].as_str().unwrap_or("-").to_owned();
            out.push((p["player_id"].as_str().unwrap_or("-").to_owned(), name));
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return Ok(out),
        }
    }
    anyhow::bail!("{prefix}: more than 20 pages")
}

#[tokio::test]
async fn operators_find_players_by_a_prefix_of_their_name_whatever_its_case_and_accents()
-> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let profiles = [
        ("zoe", "Zoë Ångström"),
        ("zb", "ZOE BRIGHT"),
        ("zol", "Zoltán"),
        ("emi", "Émilie"),
        ("emma", "Emma"),
        ("wide", "\u{ff5a}\u{ff4f}\u{ff59}"), // "zoy" in full-width letters
        ("comma", "Smith, Jo"),
    ];
    for (p, name) in profiles {
        let body = json!({"display_name": name, "country": "SE"});
        let (status, reply) = stack
            .call(Method::PUT, &format!("/players/{p}/profile"), Some(body))
            .await?;
        assert_eq!(status, 200, "{reply}");
    }
    let (status, _) = stack
        .call(
            Method::PUT,
            "/players/nameless/profile",
            Some(json!({"country": "SE"})),
        )
        .await?;
    assert_eq!(status, 200);
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(p, n)| (p.to_string(), n.to_string()))
            .collect()
    };
    let zo = pairs(&[
        ("zoe", "Zoë Ångström"),
        ("zb", "ZOE BRIGHT"),
        ("zol", "Zoltán"),
        ("wide", "\u{ff5a}\u{ff4f}\u{ff59}"),
    ]);
    // Case, accents, width and spacing aside; in the names' order; every page size.
    for prefix in ["zo", "ZO", "Zö"] {
        for limit in [1, 2, 20] {
            assert_eq!(
                found(&stack, prefix, limit).await?,
                zo,
                "{prefix} by {limit}"
            );
        }
    }
    assert_eq!(found(&stack, "zoe", 20).await?, zo[..2].to_vec());
    assert_eq!(found(&stack, "ZOË  a", 20).await?, zo[..1].to_vec());
    assert_eq!(found(&stack, "EMI", 20).await?, pairs(&[("emi", "Émilie")]));
    assert_eq!(found(&stack, "x", 20).await?, vec![]);
    // A comma is the name's, never a list's separator (the event splits on commas).
    let smith = pairs(&[("comma", "Smith, Jo")]);
    assert_eq!(found(&stack, "smith, j", 20).await?, smith);
    assert_eq!(found(&stack, ",", 20).await?, vec![]);
    assert_eq!(found(&stack, "smith,x", 20).await?, vec![]);

    // A rename moves the player; a reset and an erasure take them out.
    let (status, _) = stack
        .call(
            Method::PUT,
            "/players/zb/profile",
            Some(json!({"display_name": "Bright"})),
        )
        .await?;
    assert_eq!(status, 200);
    let (status, reply) = stack
        .call(
            Method::PATCH,
            "/players/zoe/profile",
            Some(json!({"reset": ["display_name"], "reason": "offensive name"})),
        )
        .await?;
    assert_eq!(status, 200, "{reply}");
    stack.erase_player("emi").await?;
    assert_eq!(
        found(&stack, "zo", 20).await?,
        pairs(&[("zol", "Zoltán"), ("wide", "\u{ff5a}\u{ff4f}\u{ff59}")])
    );
    assert_eq!(found(&stack, "bri", 20).await?, pairs(&[("zb", "Bright")]));
    assert_eq!(found(&stack, "émi", 20).await?, vec![]);

    // Refused, naming the parameter.
    let (_, page) = stack.get("/admin/players?name_prefix=zo&limit=1").await?;
    let cursor = page["next_cursor"].as_str().unwrap_or_default().to_owned();
    assert!(!cursor.is_empty(), "{page}");
    for (query, field) in [
        ("", "name_prefix"),
        ("name_prefix=%20%20", "name_prefix"),
        ("name_prefix=%CC%81", "name_prefix"),
        ("name_prefix=zo&limit=0", "limit"),
        ("name_prefix=zo&limit=101", "limit"),
        ("name_prefix=zo&cursor=bm9wZQ", "cursor"),
        ("name_prefix=zo&cursor=%25%25", "cursor"),
        (&format!("name_prefix=bri&cursor={cursor}"), "cursor"),
    ] {
        let (status, reply) = stack.get(&format!("/admin/players?{query}")).await?;
        assert_eq!(status, 400, "{query}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(field), "{query}: {message}");
    }
    Ok(())
}
