//! Players' profiles: set by the game's servers (`PUT /players/{p}/profile`), by the
//! player for their own card if the operator allows it (`PUT /me/profile`), read by
//! anyone (`GET /players/{p}/profile`), reset by an operator (`PATCH`, audited), erased
//! with the player, found by a prefix of their name by an operator (`GET /admin/players`).
//! Every write lands in DynamoDB first, conditional on the version it
//! read (so two writers can never interleave), then in the index's card copy at once;
//! the stream repeats it, version-checked, if that failed (docs/profiles.md).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use leaderboard_rules::page::Paging;
use serde::{Deserialize, Serialize};
use tracing::{instrument, warn};

use super::{Context, ServiceError};
use crate::service::operator::{Operator, Reason, ReasonBody, record};
use crate::store::{
    AuditAction, CardCopies, CommitOutcome, ModerationStore, ProfileStore, StoredProfile,
    VersionedCard, name_entry,
};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::profile::{Card, Profile, ProfileBody, search_key};
use leaderboard_rules::time::{now_ms, rfc3339_ms};

/// Attempts at a write that keeps meeting another one.
const MAX_ATTEMPTS: u32 = 8;

/// Reply of the profile routes.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProfileReply {
    pub player_id: PlayerId,
    #[serde(flatten)]
    pub card: Card,
    pub attributes: Option<serde_json::Map<String, serde_json::Value>>,
    /// Moves on with every write (0: never had a profile).
    pub version: u64,
    /// When it was last written; `null` for none.
    pub updated_at: Option<String>,
}

impl ProfileReply {
    fn of(player: &PlayerId, stored: StoredProfile) -> Self {
        Self {
            player_id: player.clone(),
            card: stored.profile.card,
            attributes: stored.profile.attributes,
            version: stored.version,
            updated_at: (stored.updated_at > 0).then(|| rfc3339_ms(stored.updated_at)),
        }
    }
}

/// Who writes a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// The game's servers: the whole profile.
    Server,
    /// The player: their card only; the game's attributes stay as they are.
    Player,
}

/// The player's profile (nulls and version 0 when they have none).
#[instrument(skip(ctx))]
pub async fn get<S: ProfileStore, I>(
    ctx: &Context<S, I>,
    player: &PlayerId,
) -> Result<ProfileReply, ServiceError> {
    Ok(ProfileReply::of(
        player,
        ctx.store.get_profile(player).await?,
    ))
}

/// Sets the player's profile from `body` (checked whole first: nothing is stored when
/// a field is refused).
#[instrument(skip(ctx, body))]
pub async fn put<S: ProfileStore, I: CardCopies>(
    ctx: &Context<S, I>,
    player: &PlayerId,
    body: ProfileBody,
    writer: Writer,
) -> Result<ProfileReply, ServiceError> {
    if writer == Writer::Player && !ctx.settings.players_set_profiles {
        return Err(ServiceError::ProfilesServerOnly);
    }
    if writer == Writer::Player && body.attributes.is_some() {
        return Err(DomainError::invalid("attributes", "only the game's servers set them").into());
    }
    let new = body.validate()?;
    write(ctx, player, |old| {
        Some(match writer {
            Writer::Server => new.clone(),
            Writer::Player => Profile {
                card: new.card.clone(),
                attributes: old.attributes.clone(),
            },
        })
    })
    .await
    .map(|(reply, _)| reply)
}

/// Body of `PATCH /players/{p}/profile`: the card fields to reset (to null), and why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetBody {
    pub reset: Vec<String>,
    #[serde(flatten)]
    pub reason: ReasonBody,
}

/// An operator's reset of card fields (an offensive name, an avatar), audited; scores
/// are not touched.
#[instrument(skip(ctx, body))]
pub async fn reset<S: ModerationStore + ProfileStore, I: CardCopies>(
    ctx: &Context<S, I>,
    player: &PlayerId,
    body: ResetBody,
    op: &Operator,
) -> Result<ProfileReply, ServiceError> {
    let reason = Reason::parse(body.reason)?;
    let mut fields = body.reset;
    fields.sort();
    fields.dedup();
    if fields.is_empty() {
        return Err(DomainError::invalid("reset", "name at least one field").into());
    }
    if let Some(bad) = fields
        .iter()
        .find(|f| !matches!(f.as_str(), "display_name" | "avatar" | "country"))
    {
        return Err(DomainError::invalid(
            "reset",
            format!("{bad:?} is not one of display_name, avatar, country"),
        )
        .into());
    }
    let (reply, _) = write(ctx, player, |old| {
        let mut p = old.clone();
        for f in &fields {
            match f.as_str() {
                "display_name" => p.card.display_name = None,
                "avatar" => p.card.avatar = None,
                _ => p.card.country = None,
            }
        }
        Some(p)
    })
    .await?;
    let mut audit = record(op, AuditAction::ResetProfile, &reason);
    audit.player_id = Some(player.clone());
    // The fields only: the old values are the player's data, which an erasure must
    // be able to remove, and the trail keeps records.
    audit.detail = serde_json::json!({ "reset": fields, "version": reply.version });
    ctx.store.append_audit(&audit).await?;
    Ok(reply)
}

/// Longest prefix a search takes, in characters as sent.
const MAX_PREFIX_CHARS: usize = 64;

/// A player a search found: their card as it stands.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FoundPlayer {
    pub player_id: PlayerId,
    #[serde(flatten)]
    pub card: Card,
}

/// Reply of `GET /admin/players`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FoundPage {
    pub players: Vec<FoundPlayer>,
    pub next_cursor: Option<String>,
}

/// Up to `limit` players whose display name starts with `prefix` as a search key
/// compares them (case, accents and spacing aside: [`search_key`]), in that key's order,
/// after `cursor`. Exact for the prefix: the index holds every named profile; a player
/// renamed a moment ago that the index still lists under the old name is left out.
#[instrument(skip(ctx))]
pub async fn find<S: ProfileStore, I>(
    ctx: &Context<S, I>,
    prefix: &str,
    cursor: Option<&str>,
    limit: u32,
) -> Result<FoundPage, ServiceError> {
    let key = search_key(prefix);
    // (A key condition's value may be 1 KB; a name's key is far shorter, but a prefix
    // of characters that decompose into many, ﷺ into 18, could pass it.)
    if key.is_empty() || prefix.chars().count() > MAX_PREFIX_CHARS || key.len() > 512 {
        return Err(DomainError::invalid(
            "name_prefix",
            format!(
                "must hold more than spaces and accents, at most {MAX_PREFIX_CHARS} characters"
            ),
        )
        .into());
    }
    let after = cursor.map(|c| name_cursor(c, &key)).transpose()?;
    let page = ctx
        .store
        .find_names(&key, Paging::new(after.as_deref(), limit))
        .await?;
    let cards = ctx.store.get_cards(&page.players).await?;
    let players = (page.players.into_iter().zip(cards))
        .filter(|(p, c)| name_entry(&c.card, p).is_some_and(|e| e.starts_with(&key)))
        .map(|(player_id, c)| FoundPlayer {
            player_id,
            card: c.card,
        })
        .collect();
    let next_cursor = page.next.map(|e| URL_SAFE_NO_PAD.encode(e));
    Ok(FoundPage {
        players,
        next_cursor,
    })
}

/// The entry a search's cursor names; it must be one this prefix's search gave.
fn name_cursor(cursor: &str, key: &str) -> Result<String, DomainError> {
    let bytes = (URL_SAFE_NO_PAD.decode(cursor)).map_err(|_| DomainError::InvalidCursor)?;
    let entry = String::from_utf8(bytes).map_err(|_| DomainError::InvalidCursor)?;
    let ok = entry.starts_with(key) && crate::store::entry_player(&entry).is_some();
    ok.then_some(entry).ok_or(DomainError::InvalidCursor)
}

/// Erases the player's profile (an empty one at the next version, so no copy of the
/// old one can win over it); true if there was one. One read when there is none.
pub async fn erase<S: ProfileStore, I: CardCopies>(
    ctx: &Context<S, I>,
    player: &PlayerId,
) -> Result<bool, ServiceError> {
    let (_, erased) = write(ctx, player, |old| {
        (*old != Profile::default()).then(Profile::default)
    })
    .await?;
    Ok(erased)
}

/// Writes `change(old)` at the next version, reading again while another write gets
/// in first, then copies the card into the index (best effort: the stream does too).
/// `change` answering `None` writes nothing. Returns the profile as it stands and
/// whether this call wrote it.
async fn write<S: ProfileStore, I: CardCopies>(
    ctx: &Context<S, I>,
    player: &PlayerId,
    change: impl Fn(&Profile) -> Option<Profile>,
) -> Result<(ProfileReply, bool), ServiceError> {
    for _ in 0..MAX_ATTEMPTS {
        let old = ctx.store.get_profile(player).await?;
        let Some(profile) = change(&old.profile) else {
            return Ok((ProfileReply::of(player, old), false));
        };
        let new = StoredProfile {
            profile,
            version: old.version + 1,
            updated_at: now_ms(),
        };
        if ctx.store.put_profile(player, &new).await? == CommitOutcome::StandingChanged {
            continue;
        }
        let copy = VersionedCard {
            version: new.version,
            card: new.profile.card.clone(),
        };
        if let Err(error) = ctx.index.put_cards(&[(player.clone(), copy)]).await {
            warn!(%error, "index unavailable; the stream will copy the card");
        }
        return Ok((ProfileReply::of(player, new), true));
    }
    Err(ServiceError::Contention)
}
