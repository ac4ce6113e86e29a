//! Redis Cluster beyond the adapter's own calls (those run on both topologies in
//! `index`): a board's slot moving to another node mid-test, the whole HTTP path with
//! the functions configured for a cluster, and the ElastiCache access path (TLS with a
//! private CA, the auth token read from Secrets Manager).

use leaderboard_core::store::{IndexReads, IndexUpkeep, IndexWrites};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use leaderboard::adapters::redis::{Access, RedisRankIndex, SecretToken, Target};
use leaderboard_core::store::IndexEntry;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode};
use serde_json::json;

use crate::support::{
    OwnCluster, Stack, cluster_url, dynamodb_url, eventually, free_port, index_entry as entry, lb,
    player, players, root, secrets_client, unique, wait_for_tcp,
};

/// `INFO errorstats` counts of one error kind (`MOVED`, `ASK`, `TRYAGAIN`) on a node.
async fn errors_seen(cluster: &OwnCluster, port: u16, kind: &str) -> Result<u64> {
    let info: String = cluster
        .query(port, redis::cmd("INFO").arg("errorstats"))
        .await?;
    let prefix = format!("errorstat_{kind}:count=");
    Ok(info
        .lines()
        .find_map(|l| l.trim().strip_prefix(&prefix))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0))
}

async fn count_in_slot(cluster: &OwnCluster, port: u16, slot: u16) -> Result<i64> {
    cluster
        .query(port, redis::cmd("CLUSTER").arg("COUNTKEYSINSLOT").arg(slot))
        .await
}

/// The board's expected top, best first.
fn sorted(mut keys: Vec<RankKey>) -> Vec<RankKey> {
    keys.sort_by(|a, b| a.cmp_in(b, Direction::Desc));
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_keeps_working_while_its_slot_moves_to_another_node() -> Result<()> {
    let cluster = OwnCluster::start(3).await?;
    let index = RedisRankIndex::new(
        &cluster.url(),
        &format!("{}:", unique("mv")),
        Duration::from_secs(2),
    )?;
    let b = lb("moving");
    index.init_board(&b, None, true).await?;
    let mut standings: Vec<IndexEntry> = (0..200)
        .map(|i| entry(&b, &format!("p{i:03}"), i * 10, 1))
        .collect();
    assert!(
        index
            .apply_many(&standings)
            .await?
            .applied
            .iter()
            .all(|a| *a)
    );

    let (z, _) = index.keys(&b);
    let (slot, src, dst) = slot_and_nodes(&cluster, &z).await?;
    let dst_id = cluster.id_of(dst).await?;
    let keys_before = count_in_slot(&cluster, src, slot).await?;
    ensure!(
        keys_before >= 3,
        "the board's keys live on {src}: {keys_before}"
    );

    // 1. The slot starts migrating; its keys are still on the source, which serves them.
    start_move(&cluster, slot, src, dst).await?;
    let around = index
        .around(
            BoardOrder::new(&b, Direction::Desc),
            &player("p100"),
            2,
            RankMode::Unique,
        )
        .await?;
    assert_eq!(around.map(|a| a.rank), Some(100));

    // 2. Every key of the slot moves; the source now answers ASK and the client follows
    //    it to the target for reads.
    let mut list = redis::cmd("CLUSTER");
    list.arg("GETKEYSINSLOT").arg(slot).arg(1_000);
    let keys: Vec<String> = cluster.query(src, &list).await?;
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    migrate(&cluster, src, dst, &keys).await?;
    assert_eq!(count_in_slot(&cluster, src, slot).await?, 0);
    assert_eq!(count_in_slot(&cluster, dst, slot).await?, keys.len() as i64);
    let asks = errors_seen(&cluster, src, "ASK").await?;
    let (top, total) = index.top(BoardOrder::new(&b, Direction::Desc), 5).await?;
    assert_eq!(total, 200);
    assert_eq!(
        top,
        sorted(standings.iter().map(|e| e.key.clone()).collect())[..5]
    );
    let around = index
        .around(
            BoardOrder::new(&b, Direction::Desc),
            &player("p042"),
            1,
            RankMode::Unique,
        )
        .await?;
    assert_eq!(around.map(|a| (a.rank, a.entries.len())), Some((158, 3)));
    ensure!(
        errors_seen(&cluster, src, "ASK").await? > asks,
        "the reads were redirected with ASK"
    );

    // 3. A write while the slot is half-moved (its scripts touch keys that do not exist
    //    yet, so the target answers TRYAGAIN) waits, and lands once the move completes.
    let write = {
        let e = entry(&b, "p000", 99_999, 2);
        let index = &index;
        async move { index.apply(&e).await }
    };
    let finish = async {
        tokio::time::sleep(Duration::from_millis(40)).await;
        for port in [dst, src].into_iter().chain(cluster.ports.iter().copied()) {
            let mut node = redis::cmd("CLUSTER");
            node.arg("SETSLOT").arg(slot).arg("NODE").arg(&dst_id);
            cluster.query::<redis::Value>(port, &node).await?;
        }
        anyhow::Ok(())
    };
    let (written, finished) = tokio::join!(write, finish);
    finished?;
    let placement = written?;
    ensure!(
        errors_seen(&cluster, dst, "TRYAGAIN").await? > 0,
        "the write met the half-moved slot and was retried"
    );
    assert!(placement.applied);
    let place = placement.place.expect("on the board");
    assert_eq!((place.rank, place.total), (1, 200));
    assert_eq!(cluster.owner_of(slot).await?, dst);

    // 4. The client's slot map was stale: the source answered MOVED; reads and writes
    //    go on, against the new owner.
    standings[0] = entry(&b, "p000", 99_999, 2);
    standings[1] = entry(&b, "p001", 123_456, 2);
    assert!(index.apply(&standings[1]).await?.applied);
    let (top, total) = index
        .top(BoardOrder::new(&b, Direction::Desc), 1_000)
        .await?;
    assert_eq!(total, 200);
    assert_eq!(
        top,
        sorted(standings.iter().map(|e| e.key.clone()).collect())
    );
    ensure!(
        errors_seen(&cluster, src, "MOVED").await? > 0,
        "the client was sent on with MOVED"
    );
    assert_eq!(count_in_slot(&cluster, src, slot).await?, 0);
    // The move kept the board whole: its new node adopted it (the marker named a live
    // master's history), no rebuild needed.
    assert_eq!(
        index.health(std::slice::from_ref(&b)).await?,
        [leaderboard_core::store::Health::Ready]
    );
    Ok(())
}

/// The slot of `key`, the node that serves it, and another node.
async fn slot_and_nodes(cluster: &OwnCluster, key: &str) -> Result<(u16, u16, u16)> {
    let slot: u16 = cluster
        .query(
            cluster.ports[0],
            redis::cmd("CLUSTER").arg("KEYSLOT").arg(key),
        )
        .await?;
    let src = cluster.owner_of(slot).await?;
    let dst = *cluster
        .ports
        .iter()
        .find(|&&p| p != src)
        .context("other node")?;
    Ok((slot, src, dst))
}

/// Marks `slot` as moving from `src` (MIGRATING) to `dst` (IMPORTING).
async fn start_move(cluster: &OwnCluster, slot: u16, src: u16, dst: u16) -> Result<()> {
    let (src_id, dst_id) = (cluster.id_of(src).await?, cluster.id_of(dst).await?);
    let mut importing = redis::cmd("CLUSTER");
    importing
        .arg("SETSLOT")
        .arg(slot)
        .arg("IMPORTING")
        .arg(&src_id);
    cluster.query::<redis::Value>(dst, &importing).await?;
    let mut migrating = redis::cmd("CLUSTER");
    migrating
        .arg("SETSLOT")
        .arg(slot)
        .arg("MIGRATING")
        .arg(&dst_id);
    cluster.query::<redis::Value>(src, &migrating).await?;
    Ok(())
}

/// Starts moving `slot` from `src` to `dst` and migrates `keys` of it (only those).
async fn migrate_keys(
    cluster: &OwnCluster,
    slot: u16,
    src: u16,
    dst: u16,
    keys: &[&str],
) -> Result<()> {
    start_move(cluster, slot, src, dst).await?;
    migrate(cluster, src, dst, keys).await
}

/// Moves `keys` from `src` to `dst` (MIGRATE; the slot must be moving).
async fn migrate(cluster: &OwnCluster, src: u16, dst: u16, keys: &[&str]) -> Result<()> {
    let mut migrate = redis::cmd("MIGRATE");
    migrate
        .arg("127.0.0.1")
        .arg(dst)
        .arg("")
        .arg(0)
        .arg(5_000)
        .arg("KEYS")
        .arg(keys);
    cluster.query::<redis::Value>(src, &migrate).await?;
    Ok(())
}

/// Abandons a slot's move: it stays on its node (`STABLE` on both ends).
async fn abandon(cluster: &OwnCluster, slot: u16, src: u16, dst: u16) -> Result<()> {
    for port in [src, dst] {
        let mut stable = redis::cmd("CLUSTER");
        stable.arg("SETSLOT").arg(slot).arg("STABLE");
        cluster.query::<redis::Value>(port, &stable).await?;
    }
    Ok(())
}

/// Finishes a slot's move: `dst` serves it, as every node knows.
async fn hand_over(cluster: &OwnCluster, slot: u16, dst: u16) -> Result<()> {
    let dst_id = cluster.id_of(dst).await?;
    for &port in &cluster.ports {
        let mut node = redis::cmd("CLUSTER");
        node.arg("SETSLOT").arg(slot).arg("NODE").arg(&dst_id);
        cluster.query::<redis::Value>(port, &node).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_that_splits_a_board_is_detected_and_the_board_rebuilt() -> Result<()> {
    use leaderboard_core::service::{reads, rebuild};
    use leaderboard_core::store::Health;
    use leaderboard_rules::board::Policy;

    let cluster = OwnCluster::start(3).await?;
    let env = crate::support::TestEnv::attach(
        &cluster.url(),
        &dynamodb_url(),
        &unique("t"),
        &format!("{}:", unique("k")),
    )
    .await;
    env.ctx.store.create_table().await?;
    // Two boards, each on its own slot, with 30 players through ingest.
    let (stayed, moved) = (env.board(Policy::Best).await, env.board(Policy::Best).await);
    for b in [&stayed, &moved] {
        for p in 0..30 {
            env.submit(b, &format!("p{p:02}"), "m1", 100 + p).await?;
        }
    }
    // `stayed`: its sorted set and hash are migrated away and the move abandoned; the
    // slot stays on its node with the marker only.
    // `moved`: its marker and hash are migrated, and the slot handed over after the
    // source dropped every key it still held in the slot, the sorted set among them
    // (what a node does with its keys in a slot it loses: the failure the slot-move
    // test once hit).
    for (board, keys, hand) in [(&stayed, ["z", "h"], false), (&moved, ["m", "h"], true)] {
        let (z, h) = env.ctx.index.keys(board);
        let m = env.ctx.index.marker_key(board);
        let (slot, src, dst) = slot_and_nodes(&cluster, &z).await?;
        let names: Vec<&str> = keys
            .iter()
            .map(|k| match *k {
                "z" => z.as_str(),
                "h" => h.as_str(),
                _ => m.as_str(),
            })
            .collect();
        migrate_keys(&cluster, slot, src, dst, &names).await?;
        if hand {
            let mut left = redis::cmd("CLUSTER");
            left.arg("GETKEYSINSLOT").arg(slot).arg(100);
            let left: Vec<String> = cluster.query(src, &left).await?;
            let _: i64 = cluster.query(src, redis::cmd("DEL").arg(&left)).await?;
            hand_over(&cluster, slot, dst).await?;
        } else {
            abandon(&cluster, slot, src, dst).await?;
        }
    }

    // Found out at once: reads come from DynamoDB (degraded, and right), never from the
    // split index.
    for b in [&stayed, &moved] {
        let top = reads::top(&env.ctx, b, 50, RankMode::Unique).await?;
        assert!(top.meta.degraded, "{b}: {:?}", top.meta);
        assert_eq!(top.total, 30);
        assert_eq!(top.entries[0].player_id, "p29");
        assert_eq!(
            env.ctx.index.health(std::slice::from_ref(b)).await?,
            [Health::Stale]
        );
    }
    // The repair rebuilds them whole, each on the node its slot is on now.
    let req = rebuild::RebuildRequest {
        all: true,
        ..Default::default()
    };
    let report = rebuild::run(
        &env.ctx,
        req,
        std::time::Instant::now() + Duration::from_secs(60),
    )
    .await?;
    assert!(report.done, "{report:?}");
    for b in [&stayed, &moved] {
        assert_eq!(env.assert_index_matches_store(b).await, 30);
        let top = reads::top(&env.ctx, b, 50, RankMode::Unique).await?;
        assert_eq!(serde_json::to_value(top.meta.source)?, "redis");
    }
    Ok(())
}

#[tokio::test]
async fn the_functions_configured_for_a_cluster_serve_the_whole_http_path() -> Result<()> {
    // Write-through off: what Redis holds came through the stream and the projector's
    // batched applies, which span boards on different slots and nodes.
    let stack = Stack::start_with(&cluster_url(), &[("WRITE_THROUGH", "false")]).await?;
    let mut boards = Vec::new();
    for _ in 0..3 {
        boards.push(stack.create_board("cl").await?);
    }
    for (i, lb) in boards.iter().enumerate() {
        for (p, s) in [("alice", 100), ("bob", 250), ("carol", 175), ("dave", 250)] {
            stack.post_score(lb, p, "m1", s + i as i64).await?;
        }
    }
    for lb in &boards {
        let top = eventually(
            Duration::from_secs(20),
            "the projector fills the cluster",
            || async {
                let (status, body) = stack.get(&format!("/leaderboards/{lb}/top?n=10")).await?;
                Ok(
                    (status == 200 && body["source"] == "redis" && body["total"] == 4)
                        .then_some(body),
                )
            },
        )
        .await?;
        assert_eq!(players(&top, "entries"), ["bob", "dave", "carol", "alice"]);
        let (status, rank) = stack
            .get(&format!("/leaderboards/{lb}/players/carol/rank?k=1"))
            .await?;
        assert_eq!(status, 200, "{rank}");
        assert_eq!(rank["global_rank"], 3);
        assert_eq!(players(&rank, "neighbors"), ["dave", "carol", "alice"]);
    }
    stack.set_friends("alice", &["bob"]).await?;
    let (status, friends) = stack
        .get(&format!(
            "/leaderboards/{}/players/alice/friends-rank",
            boards[2]
        ))
        .await?;
    assert_eq!(status, 200, "{friends}");
    assert_eq!(players(&friends, "neighbors"), ["bob", "alice"]);
    Ok(())
}

/// A private CA and a server certificate for 127.0.0.1, made with `openssl`.
fn make_certs(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let run = |args: &[&str]| -> Result<()> {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .context("run openssl (infra/test.sh installs it)")?;
        ensure!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(())
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=lb-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    ])?;
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ])?;
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )?;
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        "san.ext",
        "-out",
        "server.crt",
    ])?;
    Ok(())
}

struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn tls_with_a_private_ca_and_the_auth_token_from_secrets_manager() -> Result<()> {
    let dir = root().join("target/e2e-run").join(unique("tls"));
    make_certs(&dir)?;
    let token = format!("tok{}", unique("x").replace('-', ""));
    let port = free_port();
    let _server = Killed(
        std::process::Command::new("redis-server")
            .args([
                "--port",
                "0",
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(["--tls-port", &port.to_string(), "--tls-auth-clients", "no"])
            .arg("--tls-cert-file")
            .arg(dir.join("server.crt"))
            .arg("--tls-key-file")
            .arg(dir.join("server.key"))
            .arg("--tls-ca-cert-file")
            .arg(dir.join("ca.crt"))
            .args(["--requirepass", &token])
            .stdout(std::process::Stdio::null())
            .spawn()
            .context("start redis-server with TLS")?,
    );
    wait_for_tcp(port, Duration::from_secs(10)).await?;

    let secrets = secrets_client(&dynamodb_url()).await;
    let good = secrets
        .create_secret()
        .name(unique("redis-auth"))
        .secret_string(json!({ "token": token }).to_string())
        .send()
        .await?
        .arn
        .context("secret arn")?;
    let wrong = secrets
        .create_secret()
        .name(unique("redis-auth-wrong"))
        .secret_string("not-the-token")
        .send()
        .await?
        .arn
        .context("secret arn")?;
    let ca = std::fs::read(dir.join("ca.crt"))?;
    let url = format!("rediss://127.0.0.1:{port}");
    let index_with = |secret: &str, ca: Option<Vec<u8>>| {
        RedisRankIndex::with_target(
            Target::parse(&url, None).expect("url"),
            Access {
                secret: Some(SecretToken {
                    client: secrets.clone(),
                    secret_id: secret.to_owned(),
                }),
                iam: None,
                ca_pem: ca,
            },
            &format!("{}:", unique("tls")),
            Duration::from_secs(2),
            leaderboard::adapters::redis::CONNECT_TIMEOUT,
        )
    };

    let index = index_with(&good, Some(ca.clone()))?;
    let b = lb("secure");
    index.init_board(&b, None, true).await?;
    assert!(index.apply(&entry(&b, "alice", 42, 1)).await?.applied);
    let (top, total) = index.top(BoardOrder::new(&b, Direction::Desc), 10).await?;
    assert_eq!((top[0].player.as_str(), total), ("alice", 1));

    // The wrong token is refused by the server; without the private CA the handshake
    // fails (the bundled public roots do not vouch for it). Both fail, neither hangs.
    let refused = index_with(&wrong, Some(ca))?
        .init_board(&b, None, true)
        .await;
    assert!(refused.is_err(), "a wrong token is refused");
    let untrusted = index_with(&good, None)?.init_board(&b, None, true).await;
    assert!(untrusted.is_err(), "an unknown CA is refused");
    let missing = index_with(
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:nope",
        None,
    )?
    .init_board(&b, None, true)
    .await;
    let err = leaderboard_rules::error::error_chain(&missing.expect_err("a missing secret"));
    assert!(err.contains("auth token"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
