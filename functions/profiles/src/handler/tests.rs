//! The profiles handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory::{self, MemoryIndex, MemoryStore};
use leaderboard_core::store::{ModerationStore, ProfileStore};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::page::Paging;

use super::*;

leaderboard::handler_call!();

#[tokio::test]
async fn sets_reads_and_resets_a_profile_and_audits_the_reset() {
    let ctx = memory::context();
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
    let ctx = memory::context();
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
        .store
        .get_profile(&PlayerId::parse("eve").unwrap())
        .await;
    assert_eq!(stored.unwrap().version, 0);
}

#[tokio::test]
async fn players_set_their_own_card_only_where_allowed_and_never_attributes() {
    let mut ctx = memory::context();
    let own = http::request(
        "PUT /me/profile",
        &[],
        &[],
        Some(r#"{"display_name":"Me"}"#),
    );
    let mut req = http::signed_in(own, "kim");
    let send = async |ctx: &Context<MemoryStore, MemoryIndex>, req: &Request| {
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
    ctx.settings.players_set_profiles = true;
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
