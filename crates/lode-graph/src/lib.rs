//! The code graph: call sites resolved to definitions, callers and callees,
//! centrality, and a repository map.
//!
//! The index stores each call site as written (callee name, receiver text,
//! enclosing symbol) and each file's imports. This crate binds them to
//! definitions **when asked**, from the one committed state an
//! [`lode_index::Index`] sees, so edges are always consistent with the
//! symbols and an incremental build costs the graph nothing.
//!
//! The principal types and how they fit:
//!
//! - [`Resolver`] binds one call site ([`lode_index::CallRow`]) to a
//!   [`Binding`]: local targets with the [`Resolution`] that found them
//!   (own type, same file, import, package, receiver type, or a bare name
//!   match, which is marked), or external. It reads import paths through
//!   [`modules::Modules`], which knows each language's module layout.
//! - [`Resolver::callers`] / [`Resolver::callees`] give every [`Edge`] of a
//!   symbol; [`Resolver::tree`] grows a [`CallTree`] to a depth, marking cycles.
//! - [`find_symbol`] turns what a user typed (`name`, `Type::name`,
//!   `pkg.Func`, `path:LINE`) into one symbol, or lists the candidates.
//! - [`Resolver::show`] reads a symbol's body, with its direct neighbours;
//!   [`render`] gives compact text for trees and shown symbols.
//! - [`SymbolGraph`] is the whole graph for centrality: [`SymbolGraph::pagerank`],
//!   plain or seeded. [`map()`] uses it to orient a newcomer.
//!
//! ```no_run
//! use lode_graph::{Direction, Resolver, find_symbol};
//! # fn run(index: &lode_index::Index) -> lode_core::Result<()> {
//! let resolver = Resolver::new(index)?;
//! let sym = find_symbol(index, "Config::load", None)?;
//! for edge in resolver.callers(&sym)?.edges {
//!     println!("{}:{} {:?}", edge.site.path, edge.site.line, edge.resolution);
//! }
//! let tree = resolver.tree(&sym, Direction::Out, 2)?;
//! println!("{} callees", tree.children.len());
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod calls;
mod find;
mod map;
pub mod modules;
pub mod names;
mod rank;
pub mod render;
mod resolve;
mod show;
mod stored;

pub use calls::{
    CallNode, CallTree, Calls, Crowded, Direction, Edge, MAX_DEPTH, MAX_NODES, SiteRef,
};
pub use find::{candidates, find_symbol, location};
pub use map::{DirSummary, EntryPoint, MapOptions, RepoMap, estimate_tokens, map, map_within};
pub use rank::SymbolGraph;
pub use resolve::{Binding, MAX_NAME_MATCHES, Resolution, Resolver};
pub use show::{MAX_BODY_LINES, Neighbour, Shown};
