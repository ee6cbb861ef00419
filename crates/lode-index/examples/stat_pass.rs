//! The quick stat pass alone, in one process: `cargo run --release -p
//! lode-index --example stat_pass -- ROOT [ROUNDS]` on an indexed tree
//! (`LODE_CACHE_DIR` as for `lode`). Prints the wall and CPU time per pass.

use std::time::Instant;

fn cpu_ms() -> f64 {
    let t = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = t
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: f64 = f.get(11).and_then(|u| u.parse::<f64>().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    ticks * 10.0 // USER_HZ = 100
}

fn main() {
    let mut args = std::env::args().skip(1);
    let root = std::path::PathBuf::from(args.next().expect("ROOT"));
    let rounds: usize = args.next().map_or(50, |r| r.parse().unwrap());
    let loc = lode_index::IndexLocation::resolve(&root, None).unwrap();
    let index = lode_index::Index::open(&loc).unwrap();
    let manifest = index.store().manifest().unwrap();
    let basis = lode_index::incremental::WalkBasis::load(index.store())
        .unwrap()
        .expect("a walk snapshot");
    let config = lode_core::Config::default();
    let (wall, cpu) = (Instant::now(), cpu_ms());
    for _ in 0..rounds {
        let walk = lode_index::incremental::walk_with(&loc.root, Some(&basis), &manifest, &config)
            .unwrap();
        assert!(
            walk.snapshot.is_none(),
            "the quick pass fell back to a full walk"
        );
    }
    println!(
        "{} files, {} dirs: {:.2} ms wall, {:.2} ms CPU per pass",
        manifest.len(),
        basis.dirs().count(),
        wall.elapsed().as_secs_f64() * 1000.0 / rounds as f64,
        (cpu_ms() - cpu) / rounds as f64
    );
}
