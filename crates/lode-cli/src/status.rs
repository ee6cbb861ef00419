//! `lode status`: where the index is, what state it is in, what it holds.

use lode_core::Result;
use serde::Serialize;

use crate::commands::emit;
use crate::context::Context;

#[derive(Serialize)]
struct Status {
    root: String,
    index_dir: String,
    database: Option<String>,
    #[serde(flatten)]
    state: lode_index::IndexState,
    disk_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<lode_index::IndexStats>,
    /// The index's vectors and what the embedding settings changed since the last build.
    #[serde(skip_serializing_if = "Option::is_none")]
    vectors: Option<VectorsStatus>,
}

#[derive(Serialize)]
struct VectorsStatus {
    /// What the stored vectors are (absent for an index of an older lode).
    stored: Option<lode_index::vectors::VectorSpec>,
    #[serde(flatten)]
    change: lode_index::vectors::VectorChange,
}

pub(crate) fn status(ctx: Context) -> Result<u8> {
    let (state, index) = lode_index::state(&ctx.location, &ctx.config)?;
    let stats = index.as_ref().map(|i| i.stats()).transpose()?;
    let vectors = match &index {
        Some(i) => Some(VectorsStatus {
            stored: i.vector_spec()?,
            change: lode_index::vectors::change_since_build(i, &ctx.config)?,
        }),
        None => None,
    };
    let status = Status {
        root: ctx.location.root.display().to_string(),
        index_dir: ctx.location.dir.display().to_string(),
        database: index
            .as_ref()
            .map(|i| i.store().path().display().to_string()),
        state,
        disk_bytes: index.as_ref().map_or(0, |i| i.disk_bytes()),
        stats,
        vectors,
    };
    emit(&ctx, "status", &status, || status_text(&status));
    Ok(0)
}

fn status_text(s: &Status) -> String {
    use lode_index::IndexState;
    let state = match &s.state {
        IndexState::Absent => "absent (run 'lode index')".to_string(),
        IndexState::Building { pid } => format!("building (lode process {pid})"),
        IndexState::Ready => "ready".to_string(),
        IndexState::Damaged { reason } => format!("damaged ({reason}): the next query rebuilds it"),
        IndexState::Stale { changed_files } => {
            format!("stale: {changed_files} files changed — it refreshes on the next query")
        }
    };
    let mut out = format!(
        "root:   {}\nindex:  {}\nstate:  {state}\n",
        s.root, s.index_dir
    );
    if let Some(st) = &s.stats {
        let when = utc_time(st.built_at);
        out.push_str(&format!(
            "files:  {}  chunks: {}  symbols: {}  calls: {}  imports: {}\n",
            st.files, st.chunks, st.symbols, st.calls, st.imports
        ));
        let mib = s.disk_bytes as f64 / 1048576.0;
        out.push_str(&format!(
            "size:   {mib:.1} MiB on disk  generation {}  built {when} in {:.0} ms\n",
            st.generation, st.build_ms
        ));
        let langs: Vec<String> = st
            .by_language
            .iter()
            .map(|(l, c)| format!("{l} {}", c.files))
            .collect();
        if !langs.is_empty() {
            out.push_str(&format!("languages: {}\n", langs.join(", ")));
        }
        let skipped: Vec<String> = st.skipped.iter().map(|(r, n)| format!("{r} {n}")).collect();
        if !skipped.is_empty() {
            out.push_str(&format!("skipped: {}\n", skipped.join(", ")));
        }
        if st.parse_errors + st.parse_failed + st.lossy_utf8 > 0 {
            out.push_str(&format!(
                "notes: {} files with syntax errors, {} parsed as text, {} with invalid UTF-8\n",
                st.parse_errors, st.parse_failed, st.lossy_utf8
            ));
        }
    }
    if let Some(v) = &s.vectors {
        if let Some(spec) = &v.stored {
            out.push_str(&format!(
                "vectors: {} {} ({} dimensions, {})\n",
                spec.backend, spec.model, spec.dim, spec.encoding
            ));
        }
        if let Some(st) = s.stats.as_ref().filter(|st| st.vectors_pending > 0) {
            out.push_str(&format!(
                "partial: {} of {} chunks embedded (the next query or 'lode index' goes on)\n",
                st.chunks.saturating_sub(st.vectors_pending),
                st.chunks
            ));
        }
        let v = &v.change;
        let what = v.changed.join(", ");
        match v.action {
            "rebuild_vectors" => out.push_str(&format!(
                "embedding settings changed ({what}): the next build rebuilds the vectors\n"
            )),
            "clear_query_cache" => out.push_str(&format!(
                "embedding settings changed ({what}): only cached query embeddings are affected, nothing is rebuilt\n"
            )),
            _ => {}
        }
    }
    out
}

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC` (the proleptic
/// Gregorian calendar; Howard Hinnant's days-to-civil algorithm).
fn utc_time(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn unix_seconds_read_as_a_utc_date() {
        assert_eq!(super::utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(super::utc_time(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(super::utc_time(1_796_127_903), "2026-12-01 12:25:03 UTC");
    }
}
