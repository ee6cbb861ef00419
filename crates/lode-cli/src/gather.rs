//! `lode ask` and `lode gather`: search results extended through the call
//! graph (the work is `lode_gather`'s; this is arguments and output).

use std::path::{Path, PathBuf};

use clap::Args;
use lode_core::{Error, Result};
use lode_diagnostics::{note_fallback, note_hits};
use lode_gather::{AskOptions, GatherInput, Gathered, Gatherer, GraphCache, GraphState};
use lode_search::{SearchOptions, SearchResults, render};
use serde::Serialize;

use crate::commands::{emit, filter};
use crate::context::Context;

/// The search options `ask` and `gather` share with `search`.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Only results under this directory or file.
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Number of search results.
    #[arg(long, short = 'k', default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=200))]
    pub top_k: u32,
    /// Only this language (repeatable): python, rust, typescript, …
    #[arg(long, value_name = "LANG")]
    pub lang: Vec<String>,
    /// Lexical ranking only (BM25F and the rerank, no embeddings).
    #[arg(long)]
    pub lexical: bool,
    #[command(flatten)]
    pub mode: crate::cli::ModeArgs,
}

/// Runs the search both commands start from.
fn search(
    ctx: &Context,
    query: &str,
    args: &SearchArgs,
) -> Result<(lode_index::Index, SearchResults)> {
    if query.trim().is_empty() {
        return Err(Error::BadQuery("empty query".into()));
    }
    let opts = SearchOptions {
        top_k: args.top_k as usize,
        filter: filter(ctx, args.path.as_deref(), &args.lang)?,
        semantic: !args.lexical,
        mode: args.mode.mode(),
        files: args.mode.files,
        ..SearchOptions::default()
    };
    let (index, results) = ctx.open_fresh_and(|index| lode_search::search(index, query, &opts))?;
    for note in index.take_notes() {
        ctx.note(&note);
    }
    if results.no_strong_match {
        ctx.note(lode_search::NO_STRONG_MATCH);
    }
    Ok((index, results))
}

pub fn ask(ctx: Context, task: &str, args: &SearchArgs, extra: usize) -> Result<u8> {
    let (index, results) = search(&ctx, task, args)?;
    let opts = AskOptions {
        extra,
        ..AskOptions::default()
    };
    // The CLI refreshed the index just now: its graph is ready.
    let answer = lode_gather::ask(
        &index,
        &results,
        &opts,
        &GraphCache::new(),
        &GraphState::Ready,
    );
    note_hits(answer.hits.len());
    let files_view = args.mode.files;
    emit(&ctx, "ask", &answer, || {
        if files_view {
            lode_gather::render::ask_files_text(&answer)
        } else {
            lode_gather::render::ask_text(&answer)
        }
    });
    Ok(if answer.hits.is_empty() || results.no_strong_match {
        1
    } else {
        0
    })
}

/// `gather`'s JSON: the search's fields, unchanged, and the gathered section.
#[derive(Serialize)]
struct GatherAnswer<'a> {
    #[serde(flatten)]
    results: &'a SearchResults,
    gather: &'a Gathered,
}

pub fn gather(
    ctx: Context,
    query: &str,
    args: &SearchArgs,
    context_file: Option<&Path>,
    max_tokens: Option<usize>,
) -> Result<u8> {
    let trace = context_file.map(crate::input::read_tail).transpose()?;
    let (index, results) = search(&ctx, query, args)?;
    let (gatherer, note) = Gatherer::from_config(&ctx.config);
    if let Some(note) = note {
        note_fallback("gather_config");
        ctx.note(&note);
    }
    // The graph is resolved on demand from the state the search answered
    // from, which `open_fresh` just brought up to date (or, while another
    // process writes, the last complete one): it is ready.
    let input = GatherInput {
        query,
        trace: trace.as_deref(),
        max_tokens,
        graph: GraphState::Ready,
    };
    let gathered = gatherer.gather(&index, &results, &input);
    note_hits(results.hits.len() + gathered.nodes.len());
    for cause in &gathered.fallback {
        note_fallback(&format!("gather:{cause}"));
    }
    let answer = GatherAnswer {
        results: &results,
        gather: &gathered,
    };
    emit(&ctx, "gather", &answer, || {
        let mut text = render::search_text(&results);
        text.push('\n');
        text.push_str(&lode_gather::render::gathered_text(&gathered));
        text
    });
    Ok(if results.hits.is_empty() || results.no_strong_match {
        1
    } else {
        0
    })
}
