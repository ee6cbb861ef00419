//! `ask`: search re-ranked by the call graph, plus code one call from a hit.

use std::sync::OnceLock;

use lode_gather::{AskHit, AskOptions, AskResults, GraphCache, GraphState};
use lode_search::FileHit;

use super::{Call, GROUP, LANG, MODE, QUERY, Scope, TOP_K, ToolDef, UNDER};
use crate::{Answer, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "ask",
    description: "Search re-ranked by the call graph (PageRank seeded by the hits), plus up \
                  to 5 symbols one call from a hit, each with its edge. Use for a task in \
                  words or its whole text. At most {cap} characters.",
    args: &[QUERY, UNDER, LANG, TOP_K, MODE, GROUP],
    run,
};

/// One per process: the whole-repository graph is cached by index state.
static GRAPHS: OnceLock<GraphCache> = OnceLock::new();

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let query = a.non_blank(&super::QUERY)?;
    let scope = Scope::of(&call, a.string(&UNDER)?.as_deref())?;
    let opts = super::search_options(&a, scope.rel())?;
    let graphs = GRAPHS.get_or_init(GraphCache::new);
    let ((results, dense_notes), mut notes) = scope.query(&call, |index| {
        let results = lode_search::search(index, &query, &opts)?;
        // The query runs on the state the freshness check just settled: its graph is ready.
        let ranked = lode_gather::ask(
            index,
            &results,
            &AskOptions::default(),
            graphs,
            &GraphState::Ready,
        );
        // A partial or lexical-only dense side, as `search` says it.
        Ok((ranked, super::search_notes(index, &results)))
    })?;
    notes.extend(dense_notes);
    let hits = super::RankedItems::new(results, opts.files);
    Ok(scope.answer(&call, hits, notes))
}

impl super::Ranked for AskResults {
    type Hit = AskHit;

    fn parts(&self) -> (&[AskHit], &[FileHit]) {
        (&self.hits, &self.files)
    }

    fn parts_mut(&mut self) -> (&mut Vec<AskHit>, &mut Vec<FileHit>) {
        (&mut self.hits, &mut self.files)
    }

    fn hit_path(hit: &AskHit) -> &str {
        &hit.path
    }

    fn hits_text(&self) -> String {
        lode_gather::render::ask_text(self)
    }

    fn files_text(&self) -> String {
        lode_gather::render::ask_files_text(self)
    }
}
