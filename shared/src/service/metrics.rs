//! CloudWatch metrics as Embedded Metric Format lines on stdout: Lambda's log pipeline
//! turns them into metrics (namespace `Leaderboard`) without an API call on the hot path.

use serde_json::{Map, Value, json};

/// Namespace of every metric this service emits.
pub(crate) const NAMESPACE: &str = "Leaderboard";

/// The EMF document for `counts` (name, value), all with unit Count.
pub(crate) fn emf(counts: &[(&str, u64)]) -> Value {
    let mut doc = Map::new();
    doc.insert(
        "_aws".into(),
        json!({
            "Timestamp": crate::time::now_ms(),
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [[]],
                "Metrics": counts.iter().map(|(name, _)| json!({"Name": name, "Unit": "Count"})).collect::<Vec<_>>(),
            }],
        }),
    );
    for (name, value) in counts {
        doc.insert((*name).into(), json!(value));
    }
    Value::Object(doc)
}

/// Emits `counts` as one EMF line, when running as a Lambda function (the log pipeline
/// that reads EMF exists only there; tools and tests that call the use cases stay quiet).
pub fn count(counts: &[(&str, u64)]) {
    static IN_LAMBDA: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *IN_LAMBDA.get_or_init(|| std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_some()) {
        println!("{}", emf(counts));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn emf_names_each_metric_and_carries_its_value() {
        let doc = super::emf(&[("ProjectorPoisonRecords", 2)]);
        assert_eq!(doc["ProjectorPoisonRecords"], 2);
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Name"],
            "ProjectorPoisonRecords"
        );
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"][0]["Namespace"],
            "Leaderboard"
        );
    }
}
