//! The property targets of `lode-fuzz` (see the crate's documentation).

mod common;
mod extract;
mod gate;
mod overlay;
mod task;
mod tools;
