//! One function per command.

use std::io::Write;

use lode_core::{Error, Result};
use lode_diagnostics::note_hits;
use lode_index::{BuildOptions, Filter};
use lode_remote::serve::Command as ServiceCommand;
use lode_search::{GrepOptions, SearchOptions, render};
use serde::Serialize;

use crate::cli::{BenchCommand, Command, Common, GraphDirection, ShardCommand};
use crate::context::{Context, Progress};

pub fn wants_json(cmd: &Command) -> bool {
    common(cmd).json
}

fn common(cmd: &Command) -> &Common {
    match cmd {
        Command::Index { common, .. }
        | Command::Search { common, .. }
        | Command::Ask { common, .. }
        | Command::Gather { common, .. }
        | Command::Grep { common, .. }
        | Command::Outline { common, .. }
        | Command::Callers { common, .. }
        | Command::Show { common, .. }
        | Command::Map { common, .. }
        | Command::Status { common, .. }
        | Command::Doctor { common, .. }
        | Command::Mcp { common, .. }
        | Command::Gateway { common }
        | Command::Setup { common, .. }
        | Command::Eval { common, .. }
        | Command::Bench {
            what: crate::cli::BenchCommand::Index { common, .. },
        }
        | Command::Bench {
            what: crate::cli::BenchCommand::Semble { common, .. },
        }
        | Command::Bench {
            what: crate::cli::BenchCommand::Swebench { common, .. },
        } => common,
        Command::Bench {
            what: crate::cli::BenchCommand::Learn { common, .. },
        } => common,
        Command::Enqueue { common, .. } | Command::Catalog { common, .. } => common,
        Command::Serve { what } => what.common(),
        Command::Cluster { what } => what.common(),
        Command::Tools { what } => what.common(),
        Command::Shard {
            what: ShardCommand::Export { common, .. } | ShardCommand::Import { common, .. },
        } => common,
    }
}

/// Runs a command; returns the exit status. A query that meets data it
/// cannot decode marks the index damaged and runs once more: its refresh
/// then rebuilds the index (not with `--no-refresh`, which reports it).
pub fn run(mut cmd: Command) -> Result<u8> {
    // Before the clone: stdin is read once, whatever runs again.
    crate::input::read_stdin_text(&mut cmd)?;
    let again = reads_the_index(&cmd).then(|| cmd.clone());
    match (run_once(cmd), again) {
        (Err(Error::IndexCorrupt { path, reason }), Some(cmd)) => {
            let reason = lode_core::shown::field(&reason).into_owned();
            eprintln!("lode: the index is damaged ({reason}); rebuilding it");
            lode_index::mark_damaged(&path, &reason);
            run_once(cmd)
        }
        (outcome, _) => outcome,
    }
}

/// Commands that only read the index (and refresh it first): safe to run again.
fn reads_the_index(cmd: &Command) -> bool {
    let queries = matches!(
        cmd,
        Command::Search { .. }
            | Command::Ask { .. }
            | Command::Gather { .. }
            | Command::Grep { .. }
            | Command::Outline { .. }
            | Command::Callers { .. }
            | Command::Show { .. }
            | Command::Map { .. }
    );
    queries && !common(cmd).no_refresh
}

fn run_once(cmd: Command) -> Result<u8> {
    match cmd {
        cmd @ (Command::Search { .. } | Command::Grep { .. }) => run_text_search(cmd),
        cmd @ (Command::Outline { .. } | Command::Callers { .. } | Command::Show { .. }) => {
            run_symbol_lookup(cmd)
        }
        Command::Index {
            path,
            rescan,
            remote,
            no_remote,
            common,
        } => {
            let ctx = Context::new(common, path.as_deref(), None)?;
            let remote = if no_remote {
                None
            } else {
                remote.or_else(|| ctx.config.remote.url.clone())
            };
            index(ctx, rescan, remote.as_deref())
        }
        Command::Ask {
            task,
            search,
            extra,
            common,
        } => crate::gather::ask(Context::new(common, None, None)?, &task, &search, extra),
        Command::Gather {
            query,
            search,
            context_file,
            max_tokens,
            common,
        } => crate::gather::gather(
            Context::new(common, None, None)?,
            &query,
            &search,
            context_file.as_deref(),
            max_tokens,
        ),
        Command::Map { max_tokens, common } => {
            crate::graph::map(Context::new(common, None, None)?, max_tokens)
        }
        Command::Status { path, common } => {
            crate::status::status(Context::new(common, path.as_deref(), None)?)
        }
        Command::Doctor { path, common } => {
            crate::doctor::doctor(Context::lenient(common, path.as_deref())?)
        }
        Command::Mcp {
            max_chars,
            remote: Some(url),
            common,
            ..
        } => crate::mcp::run_remote(common, max_chars, url),
        Command::Mcp {
            max_chars,
            max_open,
            no_watch,
            remote: None,
            common,
        } => crate::mcp::run(common, max_chars, max_open, !no_watch),
        Command::Gateway { common } => crate::gateway::run(&common),
        Command::Setup {
            host,
            write,
            common,
        } => crate::setup::run(host, write, common.json),
        Command::Bench { what } => bench(what),
        Command::Eval {
            cases,
            top_k,
            misses,
            common,
        } => {
            let ctx = Context::new(common, None, None)?;
            crate::eval::eval(ctx, &cases, top_k, misses)
        }
        Command::Tools { what } => crate::tools::run(what),
        Command::Shard { what } => shard(what),
        Command::Enqueue {
            repo,
            commit,
            remote,
            common,
        } => crate::remote::enqueue(repo, commit, remote, &common),
        Command::Serve { what } => crate::remote::serve(what),
        Command::Cluster { what } => crate::remote::cluster(what),
        Command::Catalog { remote, common } => crate::remote::catalog(remote, &common),
    }
}

/// `search` and `grep`, here or on the index service.
fn run_text_search(cmd: Command) -> Result<u8> {
    match cmd {
        Command::Search {
            query,
            path,
            top_k,
            lang,
            lexical,
            mode,
            overlay,
            service,
            common,
        } => {
            if service.asked() {
                return crate::remote::query(
                    service,
                    ServiceCommand::Search,
                    &query,
                    top_k as usize,
                    &common,
                );
            }
            let ctx = Context::new(common, None, None)?.with_overlay(&overlay)?;
            let filter = filter(&ctx, path.as_deref(), &lang)?;
            search(
                ctx,
                &query,
                SearchOptions {
                    top_k: top_k as usize,
                    filter,
                    semantic: !lexical,
                    mode: mode.mode(),
                    files: mode.files,
                    ..SearchOptions::default()
                },
            )
        }
        Command::Grep {
            regex,
            path,
            ignore_case,
            max_lines,
            lang,
            overlay,
            service,
            common,
        } => {
            if service.asked() {
                return crate::remote::query(
                    service,
                    ServiceCommand::Grep,
                    &regex,
                    max_lines,
                    &common,
                );
            }
            let ctx = Context::new(common, None, None)?.with_overlay(&overlay)?;
            let filter = filter(&ctx, path.as_deref(), &lang)?;
            grep(
                ctx,
                &regex,
                GrepOptions {
                    case_insensitive: ignore_case,
                    filter,
                    max_lines,
                },
            )
        }
        _ => unreachable!("run_once passes only search and grep"),
    }
}

/// `outline`, `callers` and `show`, here or on the index service.
fn run_symbol_lookup(cmd: Command) -> Result<u8> {
    match cmd {
        Command::Outline {
            file,
            max_symbols,
            service,
            overlay,
            common,
        } => {
            if service.asked() {
                let path = file.to_string_lossy();
                return crate::remote::query(
                    service,
                    ServiceCommand::Outline,
                    &path,
                    max_symbols,
                    &common,
                );
            }
            let ctx = Context::new(common, None, Some(&file))?.with_overlay(&overlay)?;
            outline(ctx, &file, max_symbols)
        }
        Command::Callers {
            symbol,
            direction,
            depth,
            path,
            service,
            overlay,
            common,
        } => {
            if service.asked() {
                let asked = match direction {
                    GraphDirection::In => ServiceCommand::Callers,
                    GraphDirection::Out => ServiceCommand::Callees,
                };
                only_local(path.is_some(), "--path")?;
                return crate::remote::query(service, asked, &symbol, depth as usize, &common);
            }
            crate::graph::callers(
                Context::new(common, None, None)?.with_overlay(&overlay)?,
                &symbol,
                direction,
                depth as usize,
                path.as_deref(),
            )
        }
        Command::Show {
            symbol,
            path,
            callgraph,
            service,
            overlay,
            common,
        } => {
            if service.asked() {
                only_local(path.is_some(), "--path")?;
                only_local(callgraph, "--callgraph")?;
                return crate::remote::query(service, ServiceCommand::Show, &symbol, 1, &common);
            }
            crate::graph::show(
                Context::new(common, None, None)?.with_overlay(&overlay)?,
                &symbol,
                path.as_deref(),
                callgraph,
            )
        }
        _ => unreachable!("run_once passes only outline, callers and show"),
    }
}

/// `lode shard export|import`.
fn shard(what: ShardCommand) -> Result<u8> {
    match what {
        ShardCommand::Export { dir, common } => {
            let ctx = Context::new(common, None, None)?;
            let info = lode_index::shard::export(&ctx.open_fresh()?, &dir)?;
            emit(&ctx, "shard export", &info, || shard_text("wrote", &info));
        }
        ShardCommand::Import { file, common } => {
            let ctx = Context::new(common, None, None)?;
            let info = lode_index::shard::install(&ctx.location, &file, &ctx.config)?;
            emit(&ctx, "shard import", &info, || {
                shard_text("installed", &info)
            });
        }
    }
    Ok(0)
}

fn shard_text(verb: &str, info: &lode_index::shard::ShardInfo) -> String {
    format!(
        "{verb} {} ({:.1} MiB, generation {}, built by lode {})\n",
        info.path.display(),
        info.bytes as f64 / 1048576.0,
        info.generation,
        info.lode_version
    )
}

/// `lode bench …`: the benchmark harnesses.
fn bench(what: BenchCommand) -> Result<u8> {
    let common = match &what {
        BenchCommand::Index { common, .. }
        | BenchCommand::Semble { common, .. }
        | BenchCommand::Swebench { common, .. }
        | BenchCommand::Learn { common, .. } => common,
    };
    // The benchmarks build with the default config, but `--model` chooses the
    // model: comparing models is what a benchmark is for, so a local one that
    // does not load fails the run rather than measure the built-in model in
    // its place (a hub model that cannot be fetched fails in `select_model`).
    match &common.model {
        Some(dir) if lode_embed::HubModel::parse(&dir.to_string_lossy()).is_none() => {
            lode_index::vectors::use_local(dir)
                .map_err(|e| Error::ModelUnavailable(format!("cannot benchmark the model: {e}")))?
        }
        _ => {
            let config = lode_core::Config::default();
            if let Some(note) = crate::context::select_model(common, &config)? {
                eprintln!("lode: {}", lode_core::shown::field(&note));
            }
        }
    }
    match what {
        BenchCommand::Index {
            path,
            queries,
            tasks,
            common,
        } => crate::bench::index(common, &path, queries, tasks.as_deref()),
        BenchCommand::Semble {
            repos,
            data,
            only,
            explain,
            common,
        } => crate::eval::semble(common, &repos, &data, &only, explain.as_deref()),
        BenchCommand::Swebench {
            mirrors,
            cases,
            only,
            limit,
            work,
            explain,
            rankings,
            common,
        } => crate::swebench::swebench(
            common,
            crate::swebench::SweArgs {
                mirrors: &mirrors,
                cases: &cases,
                only: &only,
                limit,
                work: work.as_deref(),
                explain: explain.as_deref(),
                rankings: &rankings,
            },
        ),
        BenchCommand::Learn {
            mirrors,
            cases,
            work,
            held_out,
            rounds,
            dump,
            chunks,
            common,
        } => crate::learn::learn(
            common,
            crate::learn::LearnArgs {
                mirrors: &mirrors,
                cases: &cases,
                work: work.as_deref(),
                held_out: &held_out,
                rounds,
                dump: dump.as_deref(),
                chunks,
            },
        ),
    }
}

pub(crate) fn filter(
    ctx: &Context,
    path: Option<&std::path::Path>,
    langs: &[String],
) -> Result<Filter> {
    let path_prefix = match path {
        Some(p) => {
            let rel = ctx.relative_to_root(p)?;
            if !ctx.location.root.join(&rel).exists() && !ctx.overlay_touches(&rel) {
                return Err(Error::NoSuchPath(p.to_path_buf()));
            }
            Some(rel)
        }
        None => None,
    };
    lode_search::filter(path_prefix, langs)
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

pub(crate) fn emit<T: Serialize>(
    ctx: &Context,
    command: &str,
    body: &T,
    text: impl FnOnce() -> String,
) {
    if ctx.common.json {
        let notes = ctx.take_notes();
        let line = match ctx.overlay_info() {
            None => render::json(command, body, notes),
            Some(info) => {
                let mut body = serde_json::to_value(body).unwrap_or_default();
                body["overlay"] = serde_json::to_value(info).unwrap_or_default();
                render::json(command, &body, notes)
            }
        };
        print(&format!("{line}\n"));
    } else {
        // The repository's text stays data: no control character reaches the terminal.
        print(&lode_core::shown::text(&text()));
    }
}

fn index(ctx: Context, rescan: bool, remote: Option<&str>) -> Result<u8> {
    let bar = Progress::new();
    let progress = |done: usize, total: usize| bar.update(done, total);
    let embed_bar = Progress::embedding();
    let embed_progress = |done: usize, total: usize| {
        bar.clear();
        embed_bar.update(done, total)
    };
    let note = |m: &str| ctx.note(m);
    let opts = BuildOptions {
        config: &ctx.config,
        wait_for_lock: true,
        progress: Some(&progress),
        note: &note,
        rescan,
        embed: lode_index::EmbedPhase::Complete,
        embed_progress: Some(&embed_progress),
        manifest: None,
    };
    let mut build = || lode_index::build(&ctx.location, &opts);
    let (report, remote) = match remote {
        None => (build()?, None),
        Some(url) => {
            if lode_core::has_credentials(url) {
                return Err(Error::BadQuery(
                    "--remote carries credentials (user:password@); name them in [remote] \
                     of the user config (user, password_env, creds_file)"
                        .into(),
                ));
            }
            let cache = lode_remote::SharedCache {
                url,
                settings: &ctx.config.remote,
                location: &ctx.location,
                config: &ctx.config,
                note: &note,
            };
            let (report, remote) = lode_remote::index(&cache, &mut build)?;
            (report, Some(remote))
        }
    };
    bar.finish();
    embed_bar.finish();
    if let Some(e) = report.embedding.as_ref().filter(|e| e.pending > 0) {
        let why = match &e.stopped {
            Some(lode_index::Stopped::NewerBuild) => "a newer build of this index took over",
            Some(lode_index::Stopped::Busy) => "another lode process is embedding this index",
            Some(lode_index::Stopped::Unavailable) => "the index's model is not available",
            _ if e.changed_files > 0 => "files changed on disk while indexing",
            _ => "stopped",
        };
        ctx.note(&format!(
            "partial: {} of {} chunks embedded ({why}); the next query or 'lode index' goes on",
            e.chunks - e.pending,
            e.chunks
        ));
    }
    let answer = IndexAnswer {
        report: &report,
        remote: remote.as_ref(),
    };
    emit(&ctx, "index", &answer, || {
        let skipped: Vec<String> = report
            .skipped
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        let mut s = format!(
            "{} files, {} chunks, {} symbols in {:.0} ms ({} parsed, {} unchanged, {} removed)\n",
            report.files,
            report.chunks,
            report.symbols,
            report.elapsed_ms,
            report.parsed,
            report.unchanged,
            report.deleted
        );
        if !skipped.is_empty() {
            s.push_str(&format!("skipped: {}\n", skipped.join(", ")));
        }
        if report.parse_failed + report.parse_errors + report.lossy_utf8 > 0 {
            s.push_str(&format!(
                "notes: {} with syntax errors, {} indexed as text after a parse failure, {} with invalid UTF-8\n",
                report.parse_errors, report.parse_failed, report.lossy_utf8
            ));
        }
        if let Some(r) = &remote {
            s.push_str(&remote_text(r));
        }
        s
    });
    Ok(0)
}

/// `lode index`'s answer: the build, and what the shared cache did.
#[derive(Serialize)]
struct IndexAnswer<'a> {
    #[serde(flatten)]
    report: &'a lode_index::BuildReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    remote: Option<&'a lode_remote::RemoteReport>,
}

fn remote_text(r: &lode_remote::RemoteReport) -> String {
    let outcome = match r.outcome {
        lode_remote::Outcome::Hit => "fetched this tree's index",
        lode_remote::Outcome::Waited => "fetched this tree's index once another runner built it",
        lode_remote::Outcome::Ancestor => "fetched an ancestor's index and updated it",
        lode_remote::Outcome::Built => "built here",
        lode_remote::Outcome::Updated => "updated the index here",
        lode_remote::Outcome::Local => "not used",
    };
    let mut s = format!("remote cache: {outcome}");
    if let Some(f) = &r.fetched {
        s.push_str(&format!(" ({} KiB in {} ms)", f.bytes / 1024, f.ms));
    }
    if let Some(p) = &r.published {
        s.push_str(&format!(
            "; published {} KiB in {} ms",
            p.bytes / 1024,
            p.ms
        ));
    }
    s.push('\n');
    s
}

fn search(ctx: Context, query: &str, opts: SearchOptions) -> Result<u8> {
    if query.trim().is_empty() {
        return Err(Error::BadQuery("empty query".into()));
    }
    let (index, results) = ctx.open_fresh_and(|index| {
        let _over = ctx.overlay_over(index)?;
        lode_search::search(index, query, &opts)
    })?;
    note_hits(results.hits.len());
    for note in index.take_notes() {
        ctx.note(&note);
    }
    if results.no_strong_match {
        ctx.note(lode_search::NO_STRONG_MATCH);
    }
    let files_view = opts.files;
    emit(&ctx, "search", &results, || {
        if files_view {
            render::files_text(&results)
        } else {
            render::search_text(&results)
        }
    });
    Ok(if results.hits.is_empty() || results.no_strong_match {
        1
    } else {
        0
    })
}

fn grep(ctx: Context, regex: &str, opts: GrepOptions) -> Result<u8> {
    // Bad input fails before any indexing work.
    lode_search::validate_regex(regex)?;
    let (_, results) = ctx.open_fresh_and(|index| {
        let _over = ctx.overlay_over(index)?;
        lode_search::grep(index, regex, &opts)
    })?;
    note_hits(results.groups.iter().map(|g| g.lines.len()).sum());
    emit(&ctx, "grep", &results, || render::grep_text(&results));
    Ok(if results.groups.is_empty() { 1 } else { 0 })
}

fn outline(ctx: Context, file: &std::path::Path, max_symbols: usize) -> Result<u8> {
    let rel = ctx.relative_to_root(file)?;
    let abs = ctx.location.root.join(&rel);
    // A path only the overlay has: a file when it names one, else a directory of them.
    let is_dir = if abs.exists() {
        abs.is_dir()
    } else if ctx.overlay_touches(&rel) {
        !ctx.overlay_has_file(&rel)
    } else {
        return Err(Error::NoSuchPath(file.to_path_buf()));
    };
    if is_dir {
        let index = ctx.open_fresh()?;
        let _over = ctx.overlay_over(&index)?;
        let o = lode_search::outline_dir(&index, &rel, max_symbols)?;
        note_hits(o.files.iter().map(|f| f.symbols.len()).sum());
        emit(&ctx, "outline", &o, || render::dir_outline_text(&o));
        return Ok(0);
    }
    if abs.exists() && !abs.is_file() {
        return Err(Error::NotAFile(file.to_path_buf()));
    }
    let index = ctx.open_fresh()?;
    let _over = ctx.overlay_over(&index)?;
    let o = lode_search::outline(&index, &rel)?;
    note_hits(symbol_count(&o.symbols));
    emit(&ctx, "outline", &o, || render::outline_text(&o));
    Ok(0)
}

/// Symbols of an outline, nested ones included (what the MCP tool counts).
fn symbol_count(nodes: &[lode_search::OutlineNode]) -> usize {
    nodes.iter().map(|n| 1 + symbol_count(&n.children)).sum()
}

/// An option the shard nodes do not take: a clear error with `--repo`/`--all-repos`.
fn only_local(given: bool, option: &str) -> Result<()> {
    if given {
        return Err(Error::BadQuery(format!(
            "{option} is not taken with --repo or --all-repos"
        )));
    }
    Ok(())
}
