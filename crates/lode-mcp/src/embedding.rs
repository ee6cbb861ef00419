//! The embedding phase of a served repository, on a thread of its own.
//!
//! A refresh in the server commits its build and embeds for at most
//! [`INLINE`] before the call answers — with a static model, whose batches
//! take milliseconds, that covers an edit's chunks and a small repository,
//! so the answer is whole; a server's batch may take seconds, so with one
//! the call does not embed at all ([`inline_phase`]). What is left, the call
//! answers without (`partial: N of M chunks embedded` in its notes), and
//! [`Background::ensure`] starts the phase unless it runs already. A
//! newer build — a later call's refresh, the watcher's, another process's —
//! ends the running pass at its next batch; the thread then starts over on
//! the newer state, newest files first, until no chunk is left or the phase
//! cannot go on (another process embeds, a model that is not there, an
//! error: the next call starts it again).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use lode_core::Config;
use lode_index::{EmbedOptions, EmbedPhase, Index, IndexLocation, Stopped};

/// How long a call's refresh embeds (static models only) before answering.
pub(crate) const INLINE: std::time::Duration = std::time::Duration::from_millis(250);

/// The embedding a call's refresh runs itself: a little with a static model,
/// none with a server (its batch could hold the call for its deadline).
pub(crate) fn inline_phase(config: &Config) -> EmbedPhase {
    if lode_index::vectors::intended(config).is_server() {
        EmbedPhase::Later
    } else {
        EmbedPhase::Within(INLINE)
    }
}

/// One repository's embedding thread.
#[derive(Default)]
pub(crate) struct Background {
    /// Set while a thread runs the phase.
    running: Arc<AtomicBool>,
    /// Asks the thread to stop between batches (the server is going away).
    cancel: Arc<AtomicBool>,
    /// The phase's notes (a server that failed, the built-in model used
    /// instead), for the next call to pass on.
    notes: Arc<Mutex<Vec<String>>>,
    start: Mutex<()>,
}

impl Background {
    /// Starts the phase when `index` has chunks without vectors and no
    /// thread runs it.
    pub(crate) fn ensure(&self, index: &Index, loc: &IndexLocation, user_config: &Config) {
        if self.is_running() || !index.vectors_pending().is_ok_and(|n| n > 0) {
            return;
        }
        let _start = self.start.lock().unwrap_or_else(|p| p.into_inner());
        if self.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let (running, cancel, notes) = (
            self.running.clone(),
            self.cancel.clone(),
            self.notes.clone(),
        );
        let (loc, user_config) = (loc.clone(), user_config.clone());
        let spawned = std::thread::Builder::new()
            .name("lode-embed".into())
            .spawn(move || {
                let note = |m: &str| lock(&notes).push(m.to_string());
                run(&loc, &user_config, &cancel, &note);
                running.store(false, Ordering::SeqCst);
            });
        if spawned.is_err() {
            self.running.store(false, Ordering::SeqCst); // the next call tries again
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// The notes of the phase since the last call.
    pub(crate) fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notes))
    }
}

fn lock(notes: &Mutex<Vec<String>>) -> std::sync::MutexGuard<'_, Vec<String>> {
    notes.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for Background {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
    }
}

fn run(loc: &IndexLocation, user_config: &Config, cancel: &AtomicBool, note: &dyn Fn(&str)) {
    loop {
        let Ok((config, _)) = user_config.for_root(&loc.root) else {
            return;
        };
        let opts = EmbedOptions {
            cancel: Some(cancel),
            note,
            ..EmbedOptions::new(&config)
        };
        match lode_index::embed(loc, &opts, None) {
            // The newer build's chunks, newest first; after a pause that lets
            // a process that waits for the phase (`lode index`) take it over.
            Ok(r) if r.stopped == Some(Stopped::NewerBuild) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return note(&format!("embedding stopped: {e}")),
            Ok(_) => return,
        }
    }
}
