//! The operators' routes, all server-only (IAM), where an operator looks for them under
//! `/admin/`: the event sources' schema mappings (`PUT` / `GET /admin/mappings/{source}`,
//! `?dry_run=true` to check one without storing it), the rank index as the console shows
//! it (`GET /admin/index?leaderboard_id=`), stream ingest's dead letters waiting
//! (`GET /admin/dead-letters`) and the audit trail (`GET /admin/audit`). What operators
//! change on boards, players and tournaments stays with the functions that own those.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::{body, reply};
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::moderation::audit;
use leaderboard_core::service::{cache_plane, mappings};
use leaderboard_core::store::{CachePlane, DeadLetters, RankIndex, ScoreStore};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::LeaderboardId;

#[cfg(test)]
mod tests;

/// What the handler works with, built once per container.
pub struct Deps<S, I, P, D> {
    pub store: S,
    /// Answers a board's index health and slot.
    pub index: I,
    /// The rank index's control plane, when the deployment names its replication group.
    pub plane: Option<P>,
    /// Stream ingest's dead-letter queue, when the deployment has one.
    pub dead_letters: Option<D>,
}

/// The event source a mappings route names.
fn source(req: &Request) -> &str {
    req.path_parameters.get("source").map_or("", String::as_str)
}

pub async fn handle<S: ScoreStore, I: RankIndex, P: CachePlane, D: DeadLetters>(
    deps: &Deps<S, I, P, D>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let store = &deps.store;
    reply::routed(&event, async |req, route| match route {
        "PUT /admin/mappings/{source}" => match http::query(req, "dry_run") {
            None | Some("false") => reply::created(
                async { mappings::put_mapping(store, source(req), body::json_body(req)?).await }
                    .await,
            ),
            Some("true") => {
                reply::reply(200, async {
                    mappings::check_mapping(store, source(req), body::json_body(req)?).await
                })
                .await
            }
            Some(_) => reply::error_response(&ServiceError::from(DomainError::invalid(
                "dry_run",
                "must be true or false",
            ))),
        },
        "GET /admin/mappings/{source}" => reply::respond(
            200,
            mappings::get_mapping(store, source(req), http::query(req, "version")).await,
        ),
        "GET /admin/dead-letters" => match &deps.dead_letters {
            Some(queue) => reply::respond(200, queue.count().await.map_err(ServiceError::from)),
            None => reply::error_response(&ServiceError::from(DomainError::invalid(
                "dead_letters",
                "this deployment has no dead-letter queue (DEAD_LETTER_QUEUE_URL)",
            ))),
        },
        "GET /admin/index" => {
            reply::reply(200, async {
                let lb = http::query(req, "leaderboard_id")
                    .map(LeaderboardId::parse)
                    .transpose()?;
                cache_plane::index_view(store, &deps.index, deps.plane.as_ref(), lb.as_ref()).await
            })
            .await
        }
        "GET /admin/audit" => {
            reply::reply(200, async {
                let (limit, cursor) =
                    audit::parse_query(http::query(req, "limit"), http::query(req, "cursor"))?;
                audit::list(store, limit, cursor).await
            })
            .await
        }
        _ => reply::unknown_route(req),
    })
    .await
}
