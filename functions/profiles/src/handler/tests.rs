//! The profiles handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory::{self, MemoryEvents, MemoryIndex, MemoryStore};
use leaderboard_core::store::{ModerationStore, ProfileStore};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::page::Paging;

use super::*;

leaderboard::handler_call!(Deps<MemoryStore, MemoryIndex, MemoryEvents>);

fn deps() -> Deps<MemoryStore, MemoryIndex, MemoryEvents> {
    Deps {
        ctx: memory::context(),
        events: MemoryEvents::default(),
    }
}

#[tokio::test]
async fn sets_reads_and_resets_a_profile_and_audits_the_reset() {
    let ctx = deps();
    let p = [("p", "ada")];
    let body =
        r#"{"display_name":"Ada","avatar":"avatars/fox","country":"SE","attributes":{"level":3}}"#;
    let (status, put) = call(&ctx, "PUT /players/{p}/profile", &p, Some(body)).await;
    assert_eq!(status, 200, "{put}");
    assert_eq!(put["version"], 1);
    let (_, got) = call(&ctx, "GET /players/{p}/profile", &p, None).await;
    assert_eq!(got["display_name"], "Ada");
    assert_eq!(got["attributes"]["level"], 3);
    let reset = r#"{"reset":["display_name"],"reason":"offensive name"}"#;
    let (status, after) = call(&ctx, "PATCH /players/{p}/profile", &p, Some(reset)).await;
    assert_eq!(status, 200, "{after}");
    assert!(after["display_name"].is_null());
    assert_eq!(after["country"], "SE");
    assert_eq!(after["version"], 2);
    let trail = ctx
        .ctx
        .store
        .audit_page(Paging::new(None, 10))
        .await
        .unwrap()
        .records;
    assert_eq!(trail.len(), 1);
    assert_eq!(trail[0].reason, "offensive name");
    assert!(
        !trail[0].detail.to_string().contains("Ada"),
        "{:?}",
        trail[0]
    );
}

#[tokio::test]
async fn hostile_profiles_are_refused_naming_the_field_and_store_nothing() {
    let ctx = deps();
    let p = [("p", "eve")];
    let blob = "x".repeat(2048);
    let bad = [
        (
            format!(r#"{{"display_name":"{}"}}"#, "n".repeat(33)),
            "display_name",
        ),
        (r#"{"display_name":"a\u0007b"}"#.to_owned(), "display_name"),
        (
            r#"{"display_name":"rtl\u202eevil"}"#.to_owned(),
            "display_name",
        ),
        (r#"{"country":"XX"}"#.to_owned(), "country"),
        (
            format!(r#"{{"attributes":{{"blob":"{blob}"}}}}"#),
            "attributes",
        ),
        (
            r#"{"avatar":"http://example.com/a.png"}"#.to_owned(),
            "avatar",
        ),
        (r#"{"avatar":"javascript:alert(1)"}"#.to_owned(), "avatar"),
    ];
    for (body, field) in bad {
        let (status, reply) = call(&ctx, "PUT /players/{p}/profile", &p, Some(&body)).await;
        assert_eq!(status, 400, "{body}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(field), "{body}: {message}");
    }
    let (status, _) = call(
        &ctx,
        "PUT /players/{p}/profile",
        &p,
        Some(r#"{"nick":"x"}"#),
    )
    .await;
    assert_eq!(status, 400);
    let stored = ctx
        .ctx
        .store
        .get_profile(&PlayerId::parse("eve").unwrap())
        .await;
    assert_eq!(stored.unwrap().version, 0);
}

#[tokio::test]
async fn players_set_their_own_card_only_where_allowed_and_never_attributes() {
    let mut ctx = deps();
    let own = http::request(
        "PUT /me/profile",
        &[],
        &[],
        Some(r#"{"display_name":"Me"}"#),
    );
    let mut req = http::signed_in(own, "kim");
    let send = async |ctx: &Deps<MemoryStore, MemoryIndex, MemoryEvents>, req: &Request| {
        let resp = handle(ctx, testing::event(req.clone())).await.unwrap();
        (
            resp.status_code,
            http::response_json(&resp).unwrap_or_default(),
        )
    };
    let (status, reply) = send(&ctx, &req).await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (403, Some("profiles_server_only"))
    );
    ctx.ctx.settings.players_set_profiles = true;
    let server = r#"{"display_name":"Kim","attributes":{"rank":"gold"}}"#;
    call(
        &ctx,
        "PUT /players/{p}/profile",
        &[("p", "kim")],
        Some(server),
    )
    .await;
    let (status, reply) = send(&ctx, &req).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["display_name"], "Me");
    assert_eq!(reply["attributes"]["rank"], "gold");
    req.body = Some(r#"{"attributes":{"rank":"diamond"}}"#.into());
    let (status, _) = send(&ctx, &req).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_player_reads_and_claims_their_reward_once_and_a_server_claims_for_a_player() {
    use leaderboard_core::store::{Reward, RewardStatus, RewardStore, SealedWindow};
    let d = deps();
    let lb = leaderboard_rules::ids::LeaderboardId::parse("g:m:GLOBAL:DAILY:2026-12-01").unwrap();
    let reward = |p: &str| Reward {
        reward_id: lb.to_string(),
        player_id: PlayerId::parse(p).unwrap(),
        window: SealedWindow {
            leaderboard_id: lb.clone(),
            game: "g".into(),
            mode: "m".into(),
            scope: "GLOBAL".into(),
            period: leaderboard_rules::window::Period::Daily,
            window: "2026-12-01".into(),
            start: 0,
            end: 1,
            scores: Default::default(),
        },
        place: 1,
        score: 90,
        reward: "gold".into(),
        quantity: 2,
        decided_at: 1,
        expires_at: i64::MAX / 2,
        status: RewardStatus::Unclaimed,
        claimed_at: None,
        claimed_by: None,
        claim_published: false,
    };
    d.ctx
        .store
        .put_rewards(&[reward("kim"), reward("lee")])
        .await
        .unwrap();
    let send = async |route: &str, params: &[(&str, &str)]| {
        let req = http::signed_in(http::request(route, params, &[], None), "kim");
        let resp = handle(&d, testing::event(req)).await.unwrap();
        (
            resp.status_code,
            http::response_json(&resp).unwrap_or_default(),
        )
    };
    let (status, mine) = send("GET /me/rewards", &[]).await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine["rewards"][0]["reward"], "gold");
    assert_eq!(mine["rewards"][0]["quantity"], 2);
    let id = [("id", lb.as_str())];
    let (status, first) = send("POST /me/rewards/{id}/claim", &id).await;
    assert_eq!(
        (status, &first["replayed"]),
        (200, &false.into()),
        "{first}"
    );
    assert_eq!(first["reward"]["claimed_by"], "player");
    let (_, again) = send("POST /me/rewards/{id}/claim", &id).await;
    assert_eq!(again["replayed"], true);
    assert_eq!(d.events.claimed().len(), 1);
    let (_, after) = send("GET /me/rewards", &[]).await;
    assert_eq!(after["rewards"].as_array().unwrap().len(), 0);
    assert_eq!(after["claimed"][0]["status"], "CLAIMED");
    // A game server claims lee's; an unknown id is a 404.
    let lee = [("p", "lee"), ("id", lb.as_str())];
    let (status, server) = call(&d, "POST /players/{p}/rewards/{id}/claim", &lee, None).await;
    assert_eq!(status, 200, "{server}");
    assert_eq!(server["replayed"], false);
    let nope = [("p", "lee"), ("id", "nope")];
    let (status, missing) = call(&d, "POST /players/{p}/rewards/{id}/claim", &nope, None).await;
    assert_eq!(
        (status, missing["error"]["code"].as_str()),
        (404, Some("reward_not_found"))
    );
    let (_, listed) = call(&d, "GET /players/{p}/rewards", &[("p", "lee")], None).await;
    assert_eq!(listed["claimed"].as_array().unwrap().len(), 1);
}
