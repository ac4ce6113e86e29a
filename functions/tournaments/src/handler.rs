//! Tournaments (docs/tournaments.md): `POST /tournaments` (server-only, audited), `GET
//! /tournaments`, `GET /tournaments/{t}`; joins by the game's servers (`POST
//! /tournaments/{t}/players/{p}/join`) or by the signed-in player (`POST
//! /tournaments/{t}/join`); results (`POST /tournaments/{t}/players/{p}/score`,
//! server-only); a player's cohort (`GET /tournaments/{t}/players/{p}/cohort`); and
//! leagues (docs/leagues.md): a player's standing (`GET
//! /tournaments/{t}/players/{p}/league`) and a changed definition tried on a sealed
//! occurrence (`POST /tournaments/{t}/occurrences/{o}/league/dry-run`, server-only).

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::error::DomainError;
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::PlayerId;
use leaderboard::service::Context;
use leaderboard::service::boards::Created;
use leaderboard::service::moderation::Operator;
use leaderboard::service::tournaments;
use leaderboard::store::{RankIndex, ScoreStore};

pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let player = || http::path(req, "p", PlayerId::parse);
    let tournament = || req.path_parameters.get("t").map_or("", String::as_str);
    Ok(http::stamped(
        req,
        match http::route(req) {
            "POST /tournaments" => {
                let result = async {
                    let op = Operator(http::operator(req));
                    tournaments::create(ctx, &op, http::json_body(req)?).await
                };
                match result.await {
                    Ok(Created::New(v)) => http::json(201, &v),
                    Ok(Created::Existing(v)) => http::json(200, &v),
                    Err(e) => http::error_response(&e),
                }
            }
            "GET /tournaments" => http::respond(
                200,
                tournaments::list(ctx, http::query(req, "after"), http::query(req, "limit")).await,
            ),
            "GET /tournaments/{t}" => http::respond(200, tournaments::get(ctx, tournament()).await),
            "POST /tournaments/{t}/players/{p}/join" => http::respond(
                200,
                async { Ok(tournaments::join(ctx, tournament(), &player()?).await?.0) }.await,
            ),
            "POST /tournaments/{t}/join" => {
                let result = async {
                    // The JWT authorizer admits only signed-in players; the subject joins.
                    let me = (http::caller(req).player).ok_or_else(|| {
                        DomainError::invalid("Authorization", "the token names no player")
                    })?;
                    Ok(tournaments::join(ctx, tournament(), &me).await?.0)
                };
                http::respond(200, result.await)
            }
            "POST /tournaments/{t}/players/{p}/score" => {
                let result = async {
                    let op = Operator(http::operator(req));
                    let body = http::json_body(req)?;
                    tournaments::submit(ctx, tournament(), &player()?, body, &op).await
                };
                http::respond(200, result.await)
            }
            "GET /tournaments/{t}/players/{p}/cohort" => http::respond(
                200,
                async { tournaments::cohort(ctx, tournament(), &player()?).await }.await,
            ),
            "GET /tournaments/{t}/players/{p}/league" => http::respond(
                200,
                async { tournaments::standing(ctx, tournament(), &player()?).await }.await,
            ),
            "POST /tournaments/{t}/occurrences/{o}/league/dry-run" => {
                let result = async {
                    let occurrence = req.path_parameters.get("o").map_or("", String::as_str);
                    tournaments::dry_run(ctx, tournament(), occurrence, http::json_body(req)?).await
                };
                http::respond(200, result.await)
            }
            _ => http::unknown_route(req),
        },
    ))
}

#[cfg(test)]
mod tests {

    use leaderboard::memory::{self, MemoryIndex, MemoryStore};

    use super::*;

    async fn call(
        ctx: &Context<MemoryStore, MemoryIndex>,
        route: &str,
        params: &[(&str, &str)],
        body: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let req = http::request(route, params, &[], body);
        memory::reply(|e| handle(ctx, e), req).await
    }

    #[tokio::test]
    async fn defines_joins_counts_attempts_and_reads_the_cohort() {
        let ctx = memory::context();
        let def = r#"{"tournament_id":"cup","game":"g1","mode":"race","title":"Cup",
                      "schedule":{"period":"WEEKLY"},"max_attempts":2,"cohort_size":3}"#;
        assert_eq!(call(&ctx, "POST /tournaments", &[], Some(def)).await.0, 201);
        assert_eq!(call(&ctx, "POST /tournaments", &[], Some(def)).await.0, 200);
        let other = def.replace("\"Cup\"", "\"Other\"");
        let (status, body) = call(&ctx, "POST /tournaments", &[], Some(&other)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("tournament_conflict"))
        );

        let t = [("t", "cup"), ("p", "ada")];
        let (status, body) = call(
            &ctx,
            "POST /tournaments/{t}/players/{p}/score",
            &t,
            Some(r#"{"new_score":5,"match_id":"m1"}"#),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("not_joined"))
        );
        let (status, joined) = call(&ctx, "POST /tournaments/{t}/players/{p}/join", &t, None).await;
        assert_eq!(status, 200, "{joined}");
        assert_eq!(
            (joined["seat"].as_u64(), joined["cohort"].as_u64()),
            (Some(0), Some(0))
        );
        let (_, again) = call(&ctx, "POST /tournaments/{t}/players/{p}/join", &t, None).await;
        assert_eq!(again["already_joined"], true);
        assert_eq!(again["seat"], joined["seat"]);

        let score = |m: &'static str, s: i64| {
            let body = format!(r#"{{"new_score":{s},"match_id":"{m}"}}"#);
            let ctx = &ctx;
            async move {
                call(
                    ctx,
                    "POST /tournaments/{t}/players/{p}/score",
                    &t,
                    Some(&body),
                )
                .await
            }
        };
        let (status, first) = score("m1", 5).await;
        assert_eq!(status, 200, "{first}");
        assert_eq!(
            (
                first["attempts_used"].as_u64(),
                first["cohort"]["cohort"].as_u64()
            ),
            (Some(1), Some(0))
        );
        // A retry replays and counts nothing.
        let (_, retry) = score("m1", 5).await;
        assert_eq!(
            (retry["replayed"].as_bool(), retry["attempts_used"].as_u64()),
            (Some(true), Some(1))
        );
        assert_eq!(score("m2", 9).await.1["attempts_used"], 2);
        let (status, body) = score("m3", 11).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("attempts_exhausted"))
        );
        // The refused attempt left both boards as they were.
        let (status, cohort) =
            call(&ctx, "GET /tournaments/{t}/players/{p}/cohort", &t, None).await;
        assert_eq!(status, 200, "{cohort}");
        assert_eq!(
            (cohort["rank"].as_u64(), cohort["members"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(cohort["entries"][0]["score"], 9);
        assert_eq!(cohort["entries"][0]["self"], true);

        let (status, got) = call(&ctx, "GET /tournaments/{t}", &t, None).await;
        assert_eq!(status, 200);
        assert_eq!(
            (
                got["occurrence"]["players_joined"].as_u64(),
                got["occurrence"]["full"].as_bool()
            ),
            (Some(1), Some(false))
        );
        let (status, body) = call(&ctx, "GET /tournaments/{t}", &[("t", "nope")], None).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("tournament_not_found"))
        );
    }

    #[tokio::test]
    async fn a_leagues_standing_and_dry_run_routes_answer_and_refuse() {
        let ctx = memory::context();
        let def = r#"{"tournament_id":"lg","game":"g1","mode":"race","title":"League",
                      "schedule":{"period":"WEEKLY"},"cohort_size":3,
                      "league":{"tiers":[{"id":"bronze","promote":{"count":1}},
                                         {"id":"silver","demote":{"count":1}}],
                                "start_tier":"silver"}}"#;
        let (status, body) = call(&ctx, "POST /tournaments", &[], Some(def)).await;
        assert_eq!(status, 201, "{body}");
        let t = [("t", "lg"), ("p", "ada")];
        let (status, joined) = call(&ctx, "POST /tournaments/{t}/players/{p}/join", &t, None).await;
        assert_eq!(status, 200, "{joined}");
        // Silver is tier 1: its cohorts are numbered from 10,000,000.
        assert_eq!(
            (joined["tier"].as_str(), joined["cohort"].as_u64()),
            (Some("silver"), Some(10_000_000))
        );
        let (status, standing) =
            call(&ctx, "GET /tournaments/{t}/players/{p}/league", &t, None).await;
        assert_eq!(status, 200, "{standing}");
        assert_eq!(standing["tier"], "silver");
        assert_eq!(standing["changes"], serde_json::json!([]));

        let dry = "POST /tournaments/{t}/occurrences/{o}/league/dry-run";
        let league = r#"{"league":{"tiers":[{"id":"a"},{"id":"b"}]}}"#;
        let at = |o| [("t", "lg"), ("o", o)];
        let (status, body) = call(&ctx, dry, &at("2001-W01"), Some(league)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("board_not_found"))
        );
        let three = r#"{"league":{"tiers":[{"id":"a"},{"id":"b"},{"id":"c"}]}}"#;
        let occurrence = joined["occurrence"].as_str().unwrap();
        let (status, body) = call(&ctx, dry, &at(occurrence), Some(three)).await;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(status, 400, "{body}");
        assert!(message.starts_with("league.tiers"), "{message}");
        // The running occurrence's cohort is not sealed yet.
        let (status, body) = call(&ctx, dry, &at(occurrence), Some(league)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("not_sealed")),
            "{body}"
        );

        let plain = r#"{"tournament_id":"cup","game":"g1","mode":"race","title":"Cup",
                        "schedule":{"period":"WEEKLY"}}"#;
        assert_eq!(
            call(&ctx, "POST /tournaments", &[], Some(plain)).await.0,
            201
        );
        let (status, body) = call(
            &ctx,
            "GET /tournaments/{t}/players/{p}/league",
            &[("t", "cup"), ("p", "ada")],
            None,
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("no_league"))
        );
    }
}
