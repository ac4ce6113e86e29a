//! Who is asking: decoded from the request at the edge (in AWS the JWT's subject and the
//! source IP), used by the reads for the own-read cache bypass and the rate limits.

use crate::ids::PlayerId;

/// Who is asking: the verified player (the JWT's subject in AWS) and the source IP.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    pub player: Option<PlayerId>,
    pub ip: Option<String>,
}

impl Caller {
    /// True when the caller is `player` (their own reads bypass the read cache).
    pub fn is(&self, player: &PlayerId) -> bool {
        self.player.as_ref() == Some(player)
    }
}
