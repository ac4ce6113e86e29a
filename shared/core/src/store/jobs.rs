//! The queue of the seal function's long jobs: one message is one turn of a job, taken
//! by a run of its own, which hands the job on when it runs out of time. Exports
//! ([`ExportTurn`]) and board resets ([`ResetTurn`]) go through it.

use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ExportTurn, StoreError};
use leaderboard_rules::ids::LeaderboardId;

/// Which reset of which board a run is to take on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetTurn {
    pub leaderboard_id: LeaderboardId,
    pub reset: u32,
}

/// The body of one message: its fields say which job it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JobTurn {
    Export(ExportTurn),
    Reset(ResetTurn),
}

/// Hands a job to a run of its own, later (a queue that invokes the seal function).
pub trait JobQueue: Send + Sync {
    /// Sends `turn`, to be taken no sooner than `delay` from now (at most 15 minutes).
    fn hand_on(
        &self,
        turn: &JobTurn,
        delay: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_reads_back_as_the_job_it_was() {
        let lb = LeaderboardId::parse("g:m").unwrap();
        let export = JobTurn::Export(ExportTurn {
            leaderboard_id: lb.clone(),
            export_id: "e1".into(),
        });
        let reset = JobTurn::Reset(ResetTurn {
            leaderboard_id: lb,
            reset: 2,
        });
        for turn in [export, reset] {
            let text = serde_json::to_string(&turn).unwrap();
            assert_eq!(
                serde_json::from_str::<JobTurn>(&text).unwrap(),
                turn,
                "{text}"
            );
        }
    }
}
