//! `GET /leaderboards/{lb}/top?n=&rank_mode=`,
//! `GET /leaderboards/{lb}/ranks?limit=&cursor=|from_rank=&rank_mode=`,
//! `GET /leaderboards/{lb}/entries?players=&rank_mode=` and the live top view,
//! `GET /leaderboards/{lb}/live/top?n=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::cursor::CursorSigner;
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::LeaderboardId;
use leaderboard::service::Context;
use leaderboard::service::{live, reads};
use leaderboard::store::{LiveViews, RankIndex, RateCounter, ScoreStore};

pub struct Deps<S, I> {
    pub ctx: Context<S, I>,
    pub signer: CursorSigner,
}

pub async fn handle<S: ScoreStore, I: RankIndex + RateCounter + LiveViews>(
    deps: &Deps<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    Ok(http::stamped(
        req,
        match http::route(req) {
            "GET /leaderboards/{lb}/top" => {
                let result = async {
                    let lb = http::path(req, "lb", LeaderboardId::parse)?;
                    let n = reads::parse_n(http::query(req, "n"))?;
                    let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
                    reads::admit(&deps.ctx, &http::caller(req)).await?;
                    reads::top(&deps.ctx, &lb, n, mode).await
                };
                http::respond(200, result.await)
            }
            "GET /leaderboards/{lb}/ranks" => {
                let result = async {
                    let lb = http::path(req, "lb", LeaderboardId::parse)?;
                    let limit = reads::parse_limit(http::query(req, "limit"))?;
                    let start = reads::parse_start(
                        http::query(req, "from_rank"),
                        http::query(req, "cursor"),
                    )?;
                    let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
                    reads::admit(&deps.ctx, &http::caller(req)).await?;
                    reads::ranks_from(&deps.ctx, &deps.signer, &lb, start, limit, mode).await
                };
                http::respond(200, result.await)
            }
            "GET /leaderboards/{lb}/entries" => {
                let result = async {
                    let lb = http::path(req, "lb", LeaderboardId::parse)?;
                    let players =
                        reads::parse_players(http::query_list(req, "players").as_deref())?;
                    let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
                    reads::admit(&deps.ctx, &http::caller(req)).await?;
                    reads::entries(&deps.ctx, &lb, &players, mode).await
                };
                http::respond(200, result.await)
            }
            "GET /leaderboards/{lb}/live/top" => {
                let result = async {
                    let lb = http::path(req, "lb", LeaderboardId::parse)?;
                    let n = reads::parse_n(http::query(req, "n"))?;
                    reads::admit(&deps.ctx, &http::caller(req)).await?;
                    // Boxed: the reads' futures are deep enough already for one state machine.
                    Box::pin(live::watch_top(&deps.ctx, &lb, n)).await
                };
                http::respond(200, result.await)
            }
            _ => http::unknown_route(req),
        },
    ))
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::board::Policy;
    use leaderboard::memory;

    use super::*;

    #[tokio::test]
    async fn serves_the_top_and_pages_and_refuses_a_bad_limit() {
        let deps = Deps {
            ctx: memory::context(),
            signer: CursorSigner::new("test"),
        };
        let scores = [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5)];
        memory::seed(&deps.ctx, "h:top", Policy::Best, &scores).await;
        let call = |route: &'static str, query: Vec<(&'static str, String)>| {
            let query: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let req = http::request(route, &[("lb", "h:top")], &query, None);
            handle(&deps, LambdaEvent::new(req, Invocation::default()))
        };
        let top = call("GET /leaderboards/{lb}/top", vec![("n", "2".into())])
            .await
            .unwrap();
        let body = http::response_json(&top).unwrap();
        assert_eq!(top.status_code, 200);
        assert_eq!(body["top_n"], 2);
        let players: Vec<_> = body["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["player_id"].clone())
            .collect();
        assert_eq!(players, ["e", "d"]);
        let route = "GET /leaderboards/{lb}/ranks";
        let first = call(route, vec![("limit", "3".into())]).await.unwrap();
        let cursor = http::response_json(&first).unwrap()["next_cursor"]
            .as_str()
            .unwrap()
            .to_owned();
        let second = call(route, vec![("limit", "3".into()), ("cursor", cursor)])
            .await
            .unwrap();
        let body = http::response_json(&second).unwrap();
        assert_eq!(body["entries"][0]["rank"], 4);
        assert!(body["next_cursor"].is_null());
        let bad = call(route, vec![("limit", "0".into())]).await.unwrap();
        assert_eq!(bad.status_code, 400);
        let tampered = call(route, vec![("cursor", "x".into())]).await.unwrap();
        assert_eq!(
            http::response_json(&tampered).unwrap()["error"]["code"],
            "invalid_cursor"
        );
    }
}
