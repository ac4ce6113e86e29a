//! A board's standings as a CSV file (RFC 4180): one header, then one line per standing
//! in rank order, `rank,player_id,display_name,score,reached_at,metadata`. A field with a
//! comma, a quote or a line break is quoted; the metadata is its JSON text. A display name
//! a spreadsheet would read as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a
//! carriage return) is written with a leading `'`, as OWASP advises for CSV injection: a
//! player's name must not run in an operator's spreadsheet. Scores, ranks and times are
//! written as they are (a negative score is a number, not a formula).

use serde::{Deserialize, Serialize};

/// The file's first line.
pub const COLUMNS: [&str; 6] = [
    "rank",
    "player_id",
    "display_name",
    "score",
    "reached_at",
    "metadata",
];

/// The smallest part a multipart upload takes (S3's minimum for every part but the last).
pub const MIN_PART_BYTES: usize = 5 * 1024 * 1024;

/// An export's id as a path names it: 1 to 64 letters, digits and hyphens (the audit
/// record's id is 30 of them).
pub fn export_id(raw: &str) -> Result<String, crate::error::DomainError> {
    let fits = (1..=64).contains(&raw.len());
    if fits && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Ok(raw.to_owned());
    }
    Err(crate::error::DomainError::invalid(
        "id",
        "must be 1 to 64 letters, digits and hyphens",
    ))
}

/// Where an export is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExportStatus {
    /// Being written; a run goes on from the last part it saved.
    Running,
    /// The file is whole in the bucket.
    Done,
    /// It could not be handed to a run when it was asked for (the queue refused it):
    /// nothing will write it; ask again.
    Failed,
}

/// One standing, as its line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportRow<'a> {
    pub rank: u64,
    pub player_id: &'a str,
    pub display_name: Option<&'a str>,
    /// As the board writes scores (docs/decimals.md).
    pub score: String,
    /// RFC 3339, ms.
    pub reached_at: String,
    /// The JSON object of the result that set the standing.
    pub metadata: Option<String>,
}

/// A display name as a spreadsheet can show it without running it.
fn inert(name: &str) -> std::borrow::Cow<'_, str> {
    match name.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{name}").into(),
        _ => name.into(),
    }
}

/// Appends the header line to `out`.
pub fn write_header(out: &mut Vec<u8>) {
    let mut writer = writer(out);
    // Writing to a Vec cannot fail.
    writer.write_record(COLUMNS).ok();
    writer.flush().ok();
}

/// Appends one line per row to `out`.
pub fn write_rows(out: &mut Vec<u8>, rows: &[ExportRow<'_>]) {
    let mut writer = writer(out);
    for row in rows {
        let rank = row.rank.to_string();
        let name = row.display_name.map(inert).unwrap_or_default();
        let fields = [
            rank.as_str(),
            row.player_id,
            &name,
            &row.score,
            &row.reached_at,
            row.metadata.as_deref().unwrap_or(""),
        ];
        writer.write_record(fields).ok();
    }
    writer.flush().ok();
}

fn writer(out: &mut Vec<u8>) -> csv::Writer<&mut Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(
        rank: u64,
        player: &'a str,
        name: Option<&'a str>,
        meta: Option<&str>,
    ) -> ExportRow<'a> {
        ExportRow {
            rank,
            player_id: player,
            display_name: name,
            score: "-12.5".into(),
            reached_at: "2026-12-02T10:00:00.000Z".into(),
            metadata: meta.map(str::to_owned),
        }
    }

    #[test]
    fn lines_quote_what_needs_it_and_names_never_run_as_formulas() {
        let mut out = Vec::new();
        write_header(&mut out);
        write_rows(
            &mut out,
            &[
                row(1, "p1", Some("Ada"), None),
                row(
                    2,
                    "p2",
                    Some("Bob, \"the\" great"),
                    Some(r#"{"map":"dust","k":[1,2]}"#),
                ),
                row(3, "p3", Some("=HYPERLINK(\"x\")"), None),
                row(4, "p4", Some("+1"), None),
                row(5, "p5", None, None),
                row(6, "p6", Some("two\nlines"), None),
            ],
        );
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "rank,player_id,display_name,score,reached_at,metadata"
        );
        assert_eq!(lines[1], "1,p1,Ada,-12.5,2026-12-02T10:00:00.000Z,");
        assert_eq!(
            lines[2],
            r#"2,p2,"Bob, ""the"" great",-12.5,2026-12-02T10:00:00.000Z,"{""map"":""dust"",""k"":[1,2]}""#
        );
        assert_eq!(
            lines[3],
            r#"3,p3,"'=HYPERLINK(""x"")",-12.5,2026-12-02T10:00:00.000Z,"#
        );
        assert_eq!(lines[4], "4,p4,'+1,-12.5,2026-12-02T10:00:00.000Z,");
        assert_eq!(lines[5], "5,p5,,-12.5,2026-12-02T10:00:00.000Z,");
        assert_eq!(
            lines[6],
            "6,p6,\"two\nlines\",-12.5,2026-12-02T10:00:00.000Z,"
        );
        // A reader gives back every field as written.
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let read: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(read.len(), 6);
        assert_eq!(&read[1][2], "Bob, \"the\" great");
        assert_eq!(&read[1][5], r#"{"map":"dust","k":[1,2]}"#);
        assert_eq!(&read[5][2], "two\nlines");
    }
}
