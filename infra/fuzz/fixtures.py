"""Realistic data for the fuzzer: a board with players, a family, a player's token.
Prints `export NAME=value` lines for infra/fuzz/run.sh.

Usage: fixtures.py API_URL API_KEY
"""

import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "local"))
import idp  # noqa: E402  (the local identity provider, infra/local/idp.py)


def call(api, key, method, path, body=None):
    req = urllib.request.Request(api + path, method=method, headers={"x-api-key": key, "Content-Type": "application/json"},
                                 data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")


def main():
    api, key = sys.argv[1], sys.argv[2]
    board, game, mode = "fuzz-board", "fuzzgame", "ranked"
    call(api, key, "POST", "/leaderboards", {"leaderboard_id": board, "policy": "BEST"})
    for i, player in enumerate(["alice", "bob", "carol", "dave"]):
        call(api, key, "POST", f"/leaderboards/{board}/players/{player}/score",
             {"new_score": 100 + 10 * i, "match_id": "fixture"})
    call(api, key, "POST", "/families", {"game": game, "mode": mode, "periods": ["ALL_TIME", "DAILY"]})
    out = {
        "FUZZ_BOARD": board,
        "FUZZ_GAME": game,
        "FUZZ_MODE": mode,
        "FUZZ_TOKEN": idp.Idp().mint("alice", ttl_s=3 * 3600),
    }
    for name, value in out.items():
        print(f"export {name}={value}")


if __name__ == "__main__":
    main()
