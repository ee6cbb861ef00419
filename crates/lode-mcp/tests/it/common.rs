//! A turn at the process-wide state that two modules touch: the embedding
//! backend (`lode_index::vectors::configure`, set by `background_embedding`)
//! and the overlay counters (`lode_index::overlay::{builds, reads}`, counted
//! by `overlay_work`). Each of their tests holds a [`Turn`], so that neither
//! sees the other's backend or overlay work.

use std::sync::{Mutex, MutexGuard};

use lode_core::EmbedConfig;

static PROCESS_WIDE: Mutex<()> = Mutex::new(());

/// Held for a test's length; gives back the built-in embedding backend, the
/// one a process starts with, before the next test's turn.
pub struct Turn {
    _guard: MutexGuard<'static, ()>,
}

/// Waits for the turn at the process-wide state.
pub fn turn() -> Turn {
    Turn {
        _guard: PROCESS_WIDE.lock().unwrap_or_else(|p| p.into_inner()),
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        lode_index::vectors::configure(&EmbedConfig::default(), None);
    }
}
