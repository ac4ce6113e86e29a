//! IAM authentication to the cache, as the template's small profile deploys it (a
//! serverless cache, no password anywhere): the index signs its tokens with the role's
//! credentials (`adapters::redis::iam`), and a stand-in checks them as ElastiCache does,
//! with botocore's SigV4 rather than ours (`infra/local/elasticache_iam.py`), in front of a
//! redis-server whose password no client is given.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use aws_credential_types::Credentials;
use aws_credential_types::provider::SharedCredentialsProvider;
use leaderboard::adapters::redis::{Access, IamAuth, RedisRankIndex, Target};
use leaderboard_core::store::{IndexReads, IndexWrites};
use leaderboard_rules::order::{BoardOrder, Direction};

use crate::support::{free_port, index_entry as entry, lb, python, root, unique, wait_for_tcp};

const KEY: &str = "AKIALOCALIAMCACHE000";
const SECRET: &str = "local-iam-cache-secret";
const CACHE: &str = "lb-small";

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The stand-in's verdicts so far: `(user, refusal)` per AUTH.
type Verdicts = Arc<Mutex<Vec<(String, Option<String>)>>>;

fn index(port: u16, auth: IamAuth) -> Result<RedisRankIndex> {
    Ok(RedisRankIndex::with_target(
        Target::parse(&format!("redis://127.0.0.1:{port}"), None)?,
        Access {
            iam: Some(auth),
            ..Access::default()
        },
        &format!("{}:", unique("iam")),
        Duration::from_secs(2),
        leaderboard::adapters::redis::CONNECT_TIMEOUT,
    )?)
}

fn auth(cache: &str, secret: &str) -> IamAuth {
    let creds = Credentials::new(KEY, secret, None, None, "test");
    IamAuth {
        cache: cache.into(),
        user: "default.iam-user".into(),
        region: "us-east-1".into(),
        serverless: true,
        credentials: SharedCredentialsProvider::new(creds),
    }
}

#[tokio::test]
async fn the_index_authenticates_with_iam_tokens_the_cache_checks() -> Result<()> {
    let password = format!("pw{}", unique("x").replace('-', ""));
    let upstream = free_port();
    let _redis = Killed(
        Command::new("redis-server")
            .args(["--port", &upstream.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--requirepass",
                &password,
            ])
            .stdout(Stdio::null())
            .spawn()
            .context("start redis-server")?,
    );
    wait_for_tcp(upstream, Duration::from_secs(10)).await?;
    let port = free_port();
    let mut proxy = Command::new(python())
        .arg(root().join("infra/local/elasticache_iam.py"))
        .args([
            "--listen",
            &port.to_string(),
            "--upstream",
            &upstream.to_string(),
        ])
        .args([
            "--password",
            &password,
            "--cache",
            CACHE,
            "--region",
            "us-east-1",
        ])
        .args(["--key", &format!("{KEY}={SECRET}"), "--serverless"])
        .stdout(Stdio::piped())
        .spawn()
        .context("start the IAM stand-in")?;
    let out = proxy.stdout.take().context("its output")?;
    let _proxy = Killed(proxy);
    let verdicts: Verdicts = Arc::default();
    let seen = verdicts.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                let refused = v["refused"].as_str().map(str::to_owned);
                let user = v["auth"].as_str().unwrap_or_default().to_owned();
                seen.lock().expect("verdicts").push((user, refused));
            }
        }
    });
    wait_for_tcp(port, Duration::from_secs(10)).await?;

    // Signed with the right key: the index works through the stand-in.
    let good = index(port, auth(CACHE, SECRET))?;
    let b = lb("iam");
    good.init_board(&b, None, true).await?;
    ensure!(good.apply(&entry(&b, "alice", 42, 1)).await?.applied);
    let (top, total) = good.top(BoardOrder::new(&b, Direction::Desc), 10).await?;
    ensure!((top[0].player.as_str(), total) == ("alice", 1), "{top:?}");
    let accepted = || {
        let v = verdicts.lock().expect("verdicts");
        v.iter()
            .filter(|(u, r)| u == "default.iam-user" && r.is_none())
            .count()
    };
    // The connection authenticated when it opened, and again at once from its
    // subscription to fresh tokens (the one that renews them every ten minutes).
    let within = std::time::Instant::now() + Duration::from_secs(5);
    while accepted() < 2 && std::time::Instant::now() < within {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    ensure!(accepted() >= 2, "{:?}", verdicts.lock().expect("verdicts"));

    // A token signed with another secret, or for another cache, is refused.
    for (bad, why) in [
        (auth(CACHE, "not-the-secret"), "signature does not match"),
        (auth("another-cache", SECRET), "for cache"),
    ] {
        let refused = index(port, bad)?
            .init_board(&lb("iam-no"), None, true)
            .await;
        ensure!(refused.is_err(), "a bad token is refused");
        // The stand-in's verdict reaches this test through its output, maybe after the
        // refusal reached the index.
        let seen = || {
            let v = verdicts.lock().expect("verdicts");
            v.iter()
                .any(|(_, r)| r.as_deref().is_some_and(|r| r.contains(why)))
        };
        let within = std::time::Instant::now() + Duration::from_secs(5);
        while !seen() && std::time::Instant::now() < within {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ensure!(seen(), "{why}: {:?}", verdicts.lock().expect("verdicts"));
    }
    Ok(())
}
