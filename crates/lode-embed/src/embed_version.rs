/// Bump when a change to the embedding code changes the vectors a model
/// produces; it is part of every `StaticModel::id`, so indexes built with
/// older code are rebuilt. (Included by `model.rs` and by `build.rs`, which
/// computes the built-in model's id.)
const EMBED_VERSION: u32 = 1;
