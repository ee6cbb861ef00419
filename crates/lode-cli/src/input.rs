//! Texts read from stdin or a file: a task's text given as `-`, and
//! `gather --context-file`. Both are read lossily (an issue pasted with a
//! stray byte is still an issue) and bounded, whatever the input's size.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use lode_core::{Error, Result};

use crate::cli::Command;

/// The most of stdin a text given as `-` takes: task mode reads its first
/// 64 KiB, a query far less; the rest is left unread.
pub const MAX_TEXT: u64 = 1 << 20;

/// The most of a context file kept: its newest bytes, of which the decision
/// model reads the last 6,000 characters.
pub const MAX_CONTEXT: u64 = 64 << 10;

/// Replaces a command's text given as `-` with stdin's, before any other
/// work; stdin can carry one input only (the text, an overlay or a context).
pub fn read_stdin_text(cmd: &mut Command) -> Result<()> {
    let (text, other) = match cmd {
        Command::Search { query, overlay, .. } => (
            query,
            overlay
                .overlay
                .as_deref()
                .filter(|p| is_stdin(p))
                .map(|_| "--overlay"),
        ),
        Command::Ask { task, .. } => (task, None),
        Command::Gather {
            query,
            context_file,
            ..
        } => (
            query,
            context_file
                .as_deref()
                .filter(|p| is_stdin(p))
                .map(|_| "--context-file"),
        ),
        _ => return Ok(()),
    };
    if text != "-" {
        return Ok(());
    }
    if let Some(option) = other {
        return Err(Error::BadQuery(format!(
            "stdin carries one input: the text (`-`) or {option} -, not both"
        )));
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_TEXT)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("<stdin>", e))?;
    *text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(())
}

/// The newest [`MAX_CONTEXT`] bytes of a file (`-`: stdin), lossy UTF-8.
pub fn read_tail(path: &Path) -> Result<String> {
    let bytes = if is_stdin(path) {
        tail_of(std::io::stdin().lock(), MAX_CONTEXT).map_err(|e| Error::io("<stdin>", e))?
    } else {
        let mut file = std::fs::File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NoSuchPath(path.to_path_buf()),
            _ => Error::io(path, e),
        })?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len > MAX_CONTEXT {
            file.seek(SeekFrom::Start(len - MAX_CONTEXT))
                .map_err(|e| Error::io(path, e))?;
        }
        tail_of(file, MAX_CONTEXT).map_err(|e| Error::io(path, e))?
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The last `max` bytes `reader` gives, holding at most twice that at once.
fn tail_of(mut reader: impl Read, max: u64) -> std::io::Result<Vec<u8>> {
    let max = max as usize;
    let mut kept = Vec::new();
    let mut block = vec![0u8; 64 << 10];
    loop {
        let n = match reader.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        kept.extend_from_slice(&block[..n]);
        if kept.len() > 2 * max {
            kept.drain(..kept.len() - max);
        }
    }
    if kept.len() > max {
        kept.drain(..kept.len() - max);
    }
    Ok(kept)
}

fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_bytes_whatever_the_length() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for max in [1u64, 7, 300, 999, 1000, 5000] {
            let got = tail_of(&data[..], max).unwrap();
            let want = &data[data.len().saturating_sub(max as usize)..];
            assert_eq!(got, want, "max {max}");
        }
        assert!(tail_of(&b""[..], 10).unwrap().is_empty());
    }
}
