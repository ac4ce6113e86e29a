"""Realistic data for the fuzzer, so requests reach the service's rules rather than stop at
a lookup: a board with players, a family with regions and boards, a sealed season (its
results and a player's history), a weekly tournament alice joined, a board and a family
of their own for the resets, a player's token,
and a real cursor for each read whose
cursors are signed. Prints `export NAME=value` lines for infra/fuzz/run.sh.

Usage: fixtures.py API_URL API_KEY
"""

import json
import os
import shlex
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "local"))
import idp  # noqa: E402  (the local identity provider, infra/local/idp.py)

BOARD, GAME, MODE, REGION = "fuzz-board", "fuzzgame", "ranked", "EU"
SEASON_GAME = "fuzzseason"
# Resets empty their board and make its results wait (503 `board_resetting`) while they
# run: they get a board and a family that no other operation writes to.
RESET_BOARD, RESET_GAME = "fuzz-reset-board", "fuzzreset"
TOURNAMENT = "fuzz-cup"
PLAYERS = ["alice", "bob", "carol", "dave", "mallory"]


class Api:
    def __init__(self, url, key, token):
        self.url, self.key, self.token = url, key, token

    def call(self, method, path, body=None, player=False):
        auth = {"Authorization": f"Bearer {self.token}"} if player else {"x-api-key": self.key}
        req = urllib.request.Request(self.url + path, method=method,
                                     headers={**auth, "Content-Type": "application/json"},
                                     data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            raise SystemExit(f"fixtures: {method} {path}: {e.code} {e.read().decode()}") from None


def sealed_season(api):
    """A family whose season closed a moment ago, sealed: the board id of its results."""
    now = int(time.time() * 1000)
    end = now + 2000
    api.call("POST", "/families", {"game": SEASON_GAME, "mode": MODE, "regions": [REGION],
                                   "periods": ["SEASON"], "grace_seconds": 0,
                                   "season": {"id": "s1", "start": now - 3_600_000, "end": end}})
    board = None
    for i, player in enumerate(PLAYERS):
        reply = api.call("POST", "/scores", {"game": SEASON_GAME, "mode": MODE, "region": REGION,
                                             "player_id": player, "match_id": "fixture", "score": 10 + i})
        board = next(r["leaderboard_id"] for r in reply["results"] if r.get("scope") == "GLOBAL")
    # run.sh's stack seals a window a second after it closes.
    time.sleep(max(0, end - time.time() * 1000) / 1000 + 1.5)
    for _ in range(20):
        if api.call("POST", "/admin/seal", {"leaderboard_id": board})["done"]:
            return board
    raise SystemExit(f"fixtures: the season board {board} did not seal")


def main():
    url, key = sys.argv[1], sys.argv[2]
    api = Api(url, key, idp.Issuer().mint("alice", ttl_s=3 * 3600))
    api.call("POST", "/leaderboards", {"leaderboard_id": BOARD, "policy": "BEST", "dense_ranks": True})
    for i, player in enumerate(PLAYERS):
        api.call("POST", f"/leaderboards/{BOARD}/players/{player}/score",
                 {"new_score": 100 + 10 * i, "match_id": "fixture"})
    api.call("POST", "/families", {"game": GAME, "mode": MODE, "regions": [REGION, "NA"],
                                   "periods": ["ALL_TIME", "DAILY"]})
    api.call("POST", "/scores", {"game": GAME, "mode": MODE, "region": REGION,
                                 "player_id": "alice", "match_id": "fixture", "score": 7})
    api.call("POST", "/tournaments", {"tournament_id": TOURNAMENT, "game": GAME, "mode": MODE,
                                      "title": "Fuzz cup", "schedule": {"period": "WEEKLY"},
                                      "cohort_size": 10, "join_required": False})
    api.call("POST", f"/tournaments/{TOURNAMENT}/players/alice/join")
    api.call("POST", "/leaderboards", {"leaderboard_id": RESET_BOARD, "policy": "BEST"})
    api.call("POST", f"/leaderboards/{RESET_BOARD}/players/bob/score", {"new_score": 5, "match_id": "fixture"})
    api.call("POST", "/families", {"game": RESET_GAME, "mode": MODE, "regions": [REGION],
                                   "periods": ["ALL_TIME"]})
    api.call("POST", "/scores", {"game": RESET_GAME, "mode": MODE, "region": REGION,
                                 "player_id": "bob", "match_id": "fixture", "score": 3})
    ranks = api.call("GET", f"/leaderboards/{BOARD}/ranks?limit=1", player=True)
    boards = api.call("GET", f"/leaderboards?game={GAME}&mode={MODE}&limit=1", player=True)
    out = {
        "FUZZ_BOARD": BOARD,
        "FUZZ_GAME": GAME,
        "FUZZ_MODE": MODE,
        "FUZZ_TOKEN": api.token,
        "FUZZ_RANKS_CURSOR": ranks["next_cursor"],
        "FUZZ_BOARDS_CURSOR": boards["next_cursor"],
        "FUZZ_SEALED_BOARD": sealed_season(api),
        "FUZZ_SEASON_GAME": SEASON_GAME,
        "FUZZ_TOURNAMENT": TOURNAMENT,
        "FUZZ_RESET_BOARD": RESET_BOARD,
        "FUZZ_RESET_GAME": RESET_GAME,
    }
    for name, value in out.items():
        if not value:
            raise SystemExit(f"fixtures: no value for {name}")
        print(f"export {name}={shlex.quote(value)}")


if __name__ == "__main__":
    main()
