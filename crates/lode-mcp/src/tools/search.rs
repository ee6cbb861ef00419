//! `search`: ranked chunks for a query.

use lode_search::{FileHit, SearchHit, SearchResults, render};

use super::{Call, GROUP, LANG, MODE, OVERLAY, QUERY, Scope, TOP_K, ToolDef, UNDER};
use crate::{Answer, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "search",
    description: "Ranked code search: the chunks best matching an identifier, phrase or \
                  question, each as path:start-end, symbol, score and a 4-line snippet. Use \
                  to find where something is defined or handled; given an issue's text, \
                  its files (group file: files with spans). At most {cap} characters.",
    args: &[QUERY, UNDER, LANG, TOP_K, MODE, GROUP, OVERLAY],
    run,
};

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let query = a.non_blank(&super::QUERY)?;
    let scope = Scope::of(&call, a.string(&UNDER)?.as_deref())?;
    let opts = super::search_options(&a, scope.rel())?;
    let ((results, dense_notes), mut notes) = scope.query(&call, |index| {
        let results = lode_search::search(index, &query, &opts)?;
        // Why the query ran lexical-only, if it did (an embedding server down).
        let notes = super::search_notes(index, &results);
        Ok((results, notes))
    })?;
    notes.extend(dense_notes);
    let hits = super::RankedItems::new(results, opts.files);
    Ok(scope.answer(&call, hits, notes))
}

impl super::Ranked for SearchResults {
    type Hit = SearchHit;

    fn parts(&self) -> (&[SearchHit], &[FileHit]) {
        (&self.hits, &self.files)
    }

    fn parts_mut(&mut self) -> (&mut Vec<SearchHit>, &mut Vec<FileHit>) {
        (&mut self.hits, &mut self.files)
    }

    fn hit_path(hit: &SearchHit) -> &str {
        &hit.path
    }

    fn hits_text(&self) -> String {
        render::search_text(self)
    }

    fn files_text(&self) -> String {
        render::files_text(self)
    }
}
