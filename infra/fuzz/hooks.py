"""The rules openapi.yaml states in words because an OpenAPI 3.0 schema cannot: a rule
across two parameters, between the path and the body, or on a value only the service
can make. Each hook keeps Schemathesis from sending, as valid, a case such a rule
refuses; the tests named below check that the service does refuse them. Nothing else is
filtered: every other case the document calls valid must be accepted, and every case it
calls invalid refused. infra/fuzz/run.sh sets SCHEMATHESIS_HOOKS to this module.

The hooks work on whole cases (`filter_case`, `map_case`): the coverage phase applies
no other kind.
"""

import json
import os
from datetime import datetime

import schemathesis


def _signed_cursor(case, env):
    """A signed cursor is only ever one the service gave (`Cursor`): a generated one
    stands for the real cursor of the fixtures (run.sh). An empty one stays, since the
    document refuses it and so must the service."""
    if case.query and isinstance(case.query.get("cursor"), str) and case.query["cursor"]:
        case.query["cursor"] = os.environ[env]
    return case


@schemathesis.hook.apply_to(operation_id=["getRanks", "viewGetRanks"])
def filter_case(ctx, case):
    # `cursor` and `from_rank` never together (tests/e2e/walks.rs).
    return not (case.query and "cursor" in case.query and "from_rank" in case.query)


@schemathesis.hook.apply_to(operation_id=["getRanks", "viewGetRanks"])
def map_case(ctx, case):
    return _signed_cursor(case, "FUZZ_RANKS_CURSOR")


@schemathesis.hook.apply_to(operation_id=["listBoards", "viewListBoards"])
def map_case(ctx, case):  # noqa: F811  (one hook per operation)
    # A cursor is bound to the filters it was read with: the config always sends the
    # fixtures' game and mode, so `mode` never comes without `game` either.
    return _signed_cursor(case, "FUZZ_BOARDS_CURSOR")


@schemathesis.hook.apply_to(operation_id=["banPlayer", "erasePlayer"])
def filter_case(ctx, case):  # noqa: F811
    # A sweep's cursor comes only from its 202, which a sweep of a few boards never
    # answers: a case with a generated one is left out (the empty one stays, refused).
    # The refusal: functions/moderation's handler tests.
    return not (case.query and case.query.get("cursor"))


@schemathesis.hook.apply_to(operation_id=["findPlayers", "listHeld"])
def filter_case(ctx, case):  # noqa: F811
    # A search's cursor comes only from a page of the same prefix, the review queue's
    # from a page of the same game's queue (the fixtures hold no queue long enough to
    # page): a case with a generated one is left out (the empty one stays, refused). The
    # refusals of other cursors: tests/e2e/profiles.rs, tests/e2e/parameters.rs.
    return not (case.query and case.query.get("cursor"))


def _ms(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(datetime.fromisoformat(value.upper().replace("Z", "+00:00")).timestamp() * 1000)
    except (AttributeError, ValueError, OverflowError):
        return None


@schemathesis.hook.apply_to(operation_id="createFamily")
def filter_case(ctx, case):  # noqa: F811
    # A season ends after it starts (tests/e2e/gateway.rs). A season whose instants
    # this cannot read is left out rather than guessed at.
    negative = case.meta is not None and case.meta.generation.mode == "negative"
    if not negative and isinstance(case.body, dict) and not _table_accepted(case.body.get("rewards")):
        return False
    season = case.body.get("season") if isinstance(case.body, dict) else None
    if not isinstance(season, dict) or "start" not in season or "end" not in season:
        return True
    start, end = _ms(season["start"]), _ms(season["end"])
    return start is not None and end is not None and start < end


@schemathesis.hook.apply_to(operation_id="createFamily")
def map_case(ctx, case):  # noqa: F811
    body = case.body
    if not isinstance(body, dict):
        return case
    # A schedule's cron must run, in a zone the service knows, at most hourly, and its
    # ids are unique: rules on values no schema states (the refusals: schedule.rs's
    # tests and tests/e2e/schedules.rs). A valid case's schedules become runnable ones.
    schedules = body.get("schedules")
    negative = case.meta is not None and case.meta.generation.mode == "negative"
    ids = []
    if isinstance(schedules, list):
        for i, s in enumerate(schedules):
            if not isinstance(s, dict):
                continue
            if not negative and isinstance(s.get("id"), str):
                s["id"] = (s["id"][:28] + f"-{i}") if s["id"] else f"s-{i}"
            if not negative and "cron" in s:
                s["cron"], s["time_zone"] = "0 4 * * *", "Europe/Stockholm"
                s.pop("every", None)
                s.pop("anchor", None)
            if isinstance(s.get("id"), str):
                ids.append(s["id"])
    # `rank_index_periods` names only the family's own periods and schedules (the
    # refusal: tests/e2e/http_boards.rs, a_rank_order_in_dynamodb_is_kept_unless_asked...).
    # A value that is no period at all stays, so a negative case stays negative.
    if isinstance(body.get("rank_index_periods"), list):
        periods = body.get("periods") if isinstance(body.get("periods"), list) else []
        body["rank_index_periods"] = [p for p in body["rank_index_periods"]
                                      if p in periods or p in ids
                                      or not ((isinstance(p, str) and p in _PERIODS)
                                              or _SCHEDULE_ID.match(str(p)))]
    return case


_SCHEDULE_ID = __import__("re").compile(r"^[a-z][a-z0-9_-]{0,31}$")


_PERIODS = {"ALL_TIME", "SEASON", "MONTHLY", "WEEKLY", "DAILY"}


@schemathesis.hook.apply_to(operation_id="putMapping")
def map_case(ctx, case):  # noqa: F811
    # A body that names its source names the path's (tests/e2e/stream_ingest.rs).
    path = (case.path_parameters or {}).get("source")
    if isinstance(case.body, dict) and isinstance(case.body.get("source"), str) and path:
        case.body["source"] = path
    return case


# Profiles: the rules of a display name (Unicode NFC, characters by category) and of
# attributes (compact size, no nulls) are stated in words (profile.rs does them; the
# refusals: functions/profiles' handler tests and tests/e2e/profiles.rs).
_REFUSED_IN_NAME = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs"}


def _name_accepted(name, most=32):
    import unicodedata
    nfc = unicodedata.normalize("NFC", name)
    return (1 <= len(nfc) <= most
            and not any(unicodedata.category(c) in _REFUSED_IN_NAME for c in nfc)
            and not nfc[0].isspace() and not nfc[-1].isspace())


def _has_null(value):
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


@schemathesis.hook.apply_to(operation_id=["putProfile", "putOwnProfile"])
def filter_case(ctx, case):  # noqa: F811
    import unicodedata
    body = case.body if isinstance(case.body, dict) else {}
    name = body.get("display_name")
    # A code point unassigned in this Python's Unicode may have a category in the
    # service's newer one: such a case is left out, neither valid nor invalid here.
    if isinstance(name, str) and any(unicodedata.category(c) == "Cn" for c in name):
        return False
    accepted = not isinstance(name, str) or _name_accepted(name)
    if case.meta is not None and case.meta.generation.mode == "negative":
        # What the schema calls too long the service may take, shorter in NFC.
        return not (isinstance(name, str) and accepted and not 1 <= len(name) <= 32)
    attributes = body.get("attributes")
    if isinstance(attributes, dict):
        compact = json.dumps(attributes, separators=(",", ":"), ensure_ascii=False)
        if _has_null(attributes) or len(compact.encode()) > 1024:
            return False
    return accepted


# A result's metadata: at most 512 bytes of compact JSON and no nulls (as every body),
# stated in words (profile.rs checks it; the refusals: tests/e2e/metadata.rs). A larger object the schema allows is
# left out of the positive cases, and so are those near the bound, where Python's and
# serde's spellings of a number may differ by a few bytes.
@schemathesis.hook.apply_to(operation_id=["submitScore", "submitMatch", "submitTournamentScore"])
def filter_case(ctx, case):  # noqa: F811
    body = case.body if isinstance(case.body, dict) else {}
    negative = case.meta is not None and case.meta.generation.mode == "negative"
    # A correction (`op: set`) needs a `reason`, and a reason comes only with one; a
    # tournament's result takes no correction (docs/corrections.md; the refusals:
    # shared/core/tests/use_cases/ingest.rs and tests/e2e/corrections.rs).
    if not negative:
        # The fixtures' boards and family have no tie-break columns: a valid case sends
        # no subscores (docs/tiebreaks.md; the refusal, 422, is tested in
        # tests/e2e/tiebreaks.rs), so it reaches the rest of the rules.
        if body.get("subscores"):
            return False
        correcting = body.get("op") == "set"
        if correcting != ("reason" in body):
            return False
        if correcting and case.path.startswith("/tournaments/"):
            return False
    if negative:
        return True
    return _metadata_accepted(body.get("metadata"))


def _metadata_accepted(metadata):
    if not isinstance(metadata, dict):
        return True
    compact = json.dumps(metadata, separators=(",", ":"), ensure_ascii=False)
    return not _has_null(metadata) and len(compact.encode()) <= 480


# A whole match: each player's metadata as a single result's (above).
@schemathesis.hook.apply_to(operation_id=["submitWholeMatch"])
def filter_case(ctx, case):  # noqa: F811
    body = case.body if isinstance(case.body, dict) else {}
    if case.meta is not None and case.meta.generation.mode == "negative":
        return True
    players = body.get("players")
    if not isinstance(players, list):
        return True
    return all(_metadata_accepted(p.get("metadata")) for p in players if isinstance(p, dict))


# Reward ranges' rules the schema cannot say (reward.rs, check_ranges): a rank range
# ends at or after its start, and rank ranges do not overlap (percent ranges may nest).
def _ranges_accepted(ranges):
    if not isinstance(ranges, list):
        return True
    spans = sorted((r["from_rank"], r["to_rank"]) for r in ranges
                   if isinstance(r, dict) and isinstance(r.get("from_rank"), int)
                   and isinstance(r.get("to_rank"), int))
    if any(to < lo for lo, to in spans):
        return False
    return not any(spans[k - 1][1] >= spans[k][0] for k in range(1, len(spans)))


# A reward table (a board's, a family's, a tournament's): its ranges' rules.
def _table_accepted(table):
    return not isinstance(table, dict) or _ranges_accepted(table.get("ranges"))


# A league's rules the schema cannot say (league.rs, League::validated): unique tier ids,
# no promotion from the top tier nor demotion from the lowest, a zone is a count or a
# percent, reward ranges as a table's, a start tier that names a tier.
def _league_accepted(league):
    if not isinstance(league, dict) or not isinstance(league.get("tiers"), list):
        return True
    tiers = league["tiers"]
    ids = [t.get("id") for t in tiers if isinstance(t, dict)]
    if len(set(ids)) != len(ids):
        return False
    for i, tier in enumerate(tiers):
        if not isinstance(tier, dict):
            return True
        for side, banned in (("promote", i + 1 == len(tiers)), ("demote", i == 0)):
            zone = tier.get(side)
            if zone is None:
                continue
            if banned or not isinstance(zone, dict) or len(zone) != 1:
                return False
        if not _ranges_accepted(tier.get("rewards")):
            return False
    start = league.get("start_tier")
    return start is None or start in ids


# What a dry run tries is a league (the same rules).
@schemathesis.hook.apply_to(operation_id="leagueDryRun")
def filter_case(ctx, case):  # noqa: F811
    body = case.body if isinstance(case.body, dict) else {}
    if case.meta is not None and case.meta.generation.mode == "negative":
        return True
    return _league_accepted(body.get("league"))


# A tournament's title and description (a definition's or a change's): what they alone
# decide of a case: False to leave it out (an unassigned character, or in a valid case
# text the rules refuse), True for a negative case (sent as generated), None to go on.
def _texts_decide(case, body):
    import unicodedata
    texts = [(body.get("title"), 80), (body.get("description") or None, 1000)]
    if any(isinstance(t, str) and any(unicodedata.category(c) == "Cn" for c in t) for t, _ in texts):
        return False
    if case.meta is not None and case.meta.generation.mode == "negative":
        return True
    if not all(t is None or not isinstance(t, str) or _name_accepted(t, most) for t, most in texts):
        return False
    return None


# A tournament's change: its title and description as a definition's, its league by a
# league's rules (the refusals: shared/core/tests/use_cases/moderation.rs and
# tests/e2e/tournaments.rs).
@schemathesis.hook.apply_to(operation_id="updateTournament")
def filter_case(ctx, case):  # noqa: F811
    body = case.body if isinstance(case.body, dict) else {}
    decided = _texts_decide(case, body)
    if decided is not None:
        return decided
    if not _table_accepted(body.get("rewards")):
        return False
    return body.get("league") is None or _league_accepted(body["league"])


# A tournament's title and description follow a display name's character rules, at most
# 80 and 1,000 characters (profile::text; an empty description is none); a one-off
# schedule ends after it starts. The refusals: tournament.rs's tests and
# tests/e2e/tournaments.rs.
@schemathesis.hook.apply_to(operation_id="createTournament")
def filter_case(ctx, case):  # noqa: F811
    body = case.body if isinstance(case.body, dict) else {}
    decided = _texts_decide(case, body)
    if decided is not None:
        return decided
    if not _table_accepted(body.get("rewards")):
        return False
    # A league needs cohorts and a recurring schedule, and its own rules; its rewards are
    # its tiers', never a table beside them.
    league = body.get("league")
    if league is not None and body.get("rewards") is not None:
        return False
    if league is not None:
        schedule = body.get("schedule")
        if not (isinstance(schedule, dict) and "period" in schedule and body.get("cohort_size")):
            return False
        if not _league_accepted(league):
            return False
    # ... and both instants fall in 1970-9999 (an RFC 3339 text may name a year-0 date).
    schedule = body.get("schedule")
    if isinstance(schedule, dict) and "start" in schedule and "end" in schedule:
        start, end = _ms(schedule["start"]), _ms(schedule["end"])
        return (start is not None and end is not None and start < end
                and 0 <= start and end <= 253402300799999)
    return True


# A board's reward table (a create's, or a change's), and a family's change: the table's
# rules (above).
@schemathesis.hook.apply_to(operation_id=["createBoard", "setBoardRewards", "setFamilyRewards"])
def filter_case(ctx, case):  # noqa: F811
    if case.meta is not None and case.meta.generation.mode == "negative":
        return True
    body = case.body if isinstance(case.body, dict) else {}
    return _table_accepted(body.get("rewards"))
