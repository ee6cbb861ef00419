//! How long the built-in model takes to load (what a cold hybrid query pays).
fn main() {
    let t = std::time::Instant::now();
    let m = lode_embed::StaticModel::builtin();
    println!("builtin load: {:?} ({m:?})", t.elapsed());
}
