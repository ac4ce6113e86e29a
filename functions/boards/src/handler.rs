//! `POST /leaderboards` (201 created, 200 if it already exists with the same settings)
//! and `GET /leaderboards/{lb}`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::dynamodb::DynamoScoreStore;
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::LeaderboardId;
use leaderboard::service::boards::{self, Created};

pub async fn handle(
    store: &DynamoScoreStore,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    Ok(match http::route(req) {
        "POST /leaderboards" => {
            let created = async { boards::create_board(store, http::json_body(req)?).await };
            match created.await {
                Ok(Created::New(board)) => http::json(201, &board),
                Ok(Created::Existing(board)) => http::json(200, &board),
                Err(e) => http::error_response(&e),
            }
        }
        "GET /leaderboards/{lb}" => {
            let board = async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                boards::get_board(store, &lb).await
            };
            http::respond(200, board.await)
        }
        _ => http::unknown_route(req),
    })
}
