//! `S3Files`: the bucket exports are written to (`EXPORT_BUCKET`), by multipart upload,
//! and read through presigned links, so a file of any size never passes through an API
//! reply or the function's memory whole.

use std::time::Duration;

use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use tracing::instrument;

use leaderboard_core::store::{ExportFiles, StoreError};

/// The S3 adapter of [`ExportFiles`].
#[derive(Clone)]
pub struct S3Files {
    client: aws_sdk_s3::Client,
    bucket: String,
}

impl S3Files {
    pub fn new(client: aws_sdk_s3::Client, bucket: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
        }
    }

    /// The file a link names.
    fn download_name(object: &str) -> String {
        let name = object.rsplit('/').next().unwrap_or(object);
        format!("attachment; filename=\"{name}\"")
    }
}

impl ExportFiles for S3Files {
    #[instrument(skip(self))]
    async fn begin(&self, object: &str) -> Result<String, StoreError> {
        let out = self
            .client
            .create_multipart_upload()
            .bucket(&self.bucket)
            .key(object)
            .content_type("text/csv; charset=utf-8")
            .content_disposition(Self::download_name(object))
            .send()
            .await
            .map_err(|e| StoreError::call("CreateMultipartUpload(export)", e))?;
        out.upload_id.ok_or_else(|| {
            StoreError::Corrupt("CreateMultipartUpload answered no upload id".into())
        })
    }

    #[instrument(skip(self, bytes), fields(bytes = bytes.len()))]
    async fn put_part(
        &self,
        object: &str,
        upload: &str,
        n: u32,
        bytes: Vec<u8>,
    ) -> Result<String, StoreError> {
        let out = self
            .client
            .upload_part()
            .bucket(&self.bucket)
            .key(object)
            .upload_id(upload)
            .part_number(n as i32)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| StoreError::call("UploadPart(export)", e))?;
        out.e_tag
            .ok_or_else(|| StoreError::Corrupt("UploadPart answered no ETag".into()))
    }

    #[instrument(skip(self, parts), fields(parts = parts.len()))]
    async fn finish(&self, object: &str, upload: &str, parts: &[String]) -> Result<(), StoreError> {
        let parts = (1..)
            .zip(parts)
            .map(|(n, etag)| CompletedPart::builder().part_number(n).e_tag(etag).build())
            .collect();
        let res = self
            .client
            .complete_multipart_upload()
            .bucket(&self.bucket)
            .key(object)
            .upload_id(upload)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .send()
            .await;
        let Err(e) = res else { return Ok(()) };
        // A run that stopped between completing the upload and saving it goes on here:
        // the upload is gone because the file is whole.
        let gone = e.as_service_error().and_then(|s| s.meta().code()) == Some("NoSuchUpload");
        if gone {
            let head = self.client.head_object().bucket(&self.bucket).key(object);
            if head.send().await.is_ok() {
                return Ok(());
            }
        }
        Err(StoreError::call("CompleteMultipartUpload(export)", e))
    }

    async fn link(&self, object: &str, ttl: Duration) -> Result<String, StoreError> {
        let presigning = PresigningConfig::expires_in(ttl).map_err(StoreError::request)?;
        let req = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(object)
            .presigned(presigning)
            .await
            .map_err(|e| StoreError::call("GetObject(presign export)", e))?;
        Ok(req.uri().to_owned())
    }
}
