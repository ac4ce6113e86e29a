// A web game's leaderboard panel on the TypeScript client (docs/clients.md): the
// player's rank and neighbours, their friends, and the top 10 kept live. Settings come
// from the page's query: api, realtime, board, player, token (the game's sign-in gives
// the token; locally the events API's /demo/token).
import { LeaderboardError, PlayerClient } from "../../src/index.ts";

const q = new URLSearchParams(location.search);
const board = q.get("board");
const me = q.get("player");
const lb = new PlayerClient({ baseUrl: q.get("api"), token: () => q.get("token") });
const $ = (id) => document.getElementById(id);

function rows(list, entries) {
  list.replaceChildren(...entries.map((e) => {
    const li = document.createElement("li");
    li.value = e.rank;
    li.dataset.player = e.player_id;
    li.className = e.player_id === me ? "me" : "";
    li.textContent = `${e.display_name ?? e.player_id} ${e.score}`;
    return li;
  }));
}

async function showMe() {
  const mine = await lb.rank(board, me, { k: 2 });
  $("rank").textContent = mine.global_rank;
  $("score").textContent = mine.score;
  rows($("near"), mine.neighbors);
  const friends = await lb.friends(board, me, { k: 5 });
  rows($("friends"), friends.neighbors);
}

async function main() {
  try {
    await showMe();
    lb.watchTop(board, 10, (view) => {
      rows($("top"), view.entries);
      void showMe();
    }, { realtimeUrl: q.get("realtime") });
    $("status").textContent = "live";
  } catch (error) {
    $("status").className = "error";
    $("status").textContent = error instanceof LeaderboardError ? error.code : `${error.name}: ${error.message}`;
  }
}

void main();
