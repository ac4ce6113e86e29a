//! The exports' ports from the configuration: the bucket (`EXPORT_BUCKET`), the queue
//! that hands a job on (`EXPORT_QUEUE_URL`) and the tunables.

use leaderboard_core::service::export::ExportSettings;

use crate::adapters::s3::S3Files;
use crate::adapters::sqs::SqsJobQueue;
use crate::wiring::config::{Config, ConfigError};

/// What the function that writes exports works with.
pub struct Exports {
    pub files: S3Files,
    pub queue: SqsJobQueue,
    pub settings: ExportSettings,
}

/// The bucket, the queue and the tunables. An S3 endpoint of its own
/// (`AWS_ENDPOINT_URL_S3`, a local stand-in) is addressed by path, as stand-ins are;
/// links to it name it. Checksums are sent only where S3 requires them.
pub async fn exports(config: &Config) -> Result<Exports, ConfigError> {
    let (bucket, queue) = config.require_export()?;
    let aws = super::aws().await;
    let local = std::env::var_os("AWS_ENDPOINT_URL_S3").is_some();
    let s3 = aws_sdk_s3::config::Builder::from(aws)
        .force_path_style(local)
        .request_checksum_calculation(aws_sdk_s3::config::RequestChecksumCalculation::WhenRequired)
        .build();
    let d = ExportSettings::default();
    Ok(Exports {
        files: S3Files::new(aws_sdk_s3::Client::from_conf(s3), bucket),
        queue: SqsJobQueue::new(aws_sdk_sqs::Client::new(aws), queue),
        settings: ExportSettings {
            part_bytes: config
                .export_part_bytes
                .map_or(d.part_bytes, |b| b as usize),
            link_ttl: config.export_link_ttl.unwrap_or(d.link_ttl),
            settle: config.export_settle.unwrap_or(d.settle),
        },
    })
}
