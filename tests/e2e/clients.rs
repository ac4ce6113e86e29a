//! The client libraries' own tests against a local stack (docs/clients.md): the
//! TypeScript client's (`clients/typescript/test/`, node's test runner, run on the build
//! `infra/test.sh` makes), every one of them run, none skipped.

use anyhow::{Context as _, Result, ensure};

use crate::support::{API_KEY, Stack, redis_url, root};

#[tokio::test]
async fn the_typescript_client_passes_its_tests_against_the_stack() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let out = tokio::process::Command::new("node")
        .args(["--test", "test/"])
        .current_dir(root().join("clients/typescript"))
        .env("LB_API", &stack.api)
        .env("LB_EVENTS", &stack.events)
        .env("LB_SOCIAL", &stack.social)
        .env("LB_REALTIME", format!("{}/event/realtime", stack.realtime))
        .env("LB_API_KEY", API_KEY)
        .output()
        .await
        .context("run node --test (infra/test.sh builds the client first)")?;
    let report = String::from_utf8_lossy(&out.stdout);
    ensure!(out.status.success(), "the client's tests failed:\n{report}");
    ensure!(
        report.contains("# skipped 0") && report.contains("# fail 0"),
        "not every test ran:\n{report}"
    );
    // The figures the tests print (the live view's latency), for --success-output.
    for line in report
        .lines()
        .filter(|l| l.trim_start().starts_with("# live"))
    {
        println!("{}", line.trim_start());
    }
    Ok(())
}
