//! The evidence about a candidate file as a vector ([`FileFeatures`], by
//! [`Feature`]) and the linear model that scores it ([`Weights`]).

/// A kind of evidence about a candidate file, in vector order: the first
/// ones add to a file's score, the last four ([`Feature::FACTORS`])
/// multiply it when set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Whole-file BM25 over the task's weighted terms (relative to the best).
    Bm25,
    /// The best chunk's fused lexical and dense score (relative).
    Chunk,
    /// The best chunk's embedding similarity (relative).
    Dense,
    /// A path the task names is this file (1), or its file name is (less).
    Path,
    /// A trace frame ran in this file.
    Frame,
    /// A module path the task names is this file or its package.
    Module,
    /// It defines names the prose or a trace writes as code, each counting
    /// the more the fewer files define it.
    Defines,
    /// The same for names only the task's code blocks hold.
    DefinesCode,
    /// Its file name (without extension) is a word of the task: 1 in the
    /// title or as code, 0.5 in the prose.
    Stem,
    /// It lies in a part of the code the title's prefix names (`net/http: …`).
    Area,
    /// It holds an error message the task quotes.
    Message,
    /// It holds lines of code the task quotes (their share).
    Snippet,
    /// How near its three nearest chunks come to the task, on average, among
    /// all files (min–max scaled).
    DenseFile,
    /// Its size against the largest file's, on a log scale: a large file
    /// holds more of the code a change touches.
    Size,
    /// A strong candidate imports it (that candidate's score against the best's).
    Imported,
    /// A test file.
    Test,
    /// Not code: prose, data, a notebook, a locale catalog.
    NonCode,
    /// Under an example or documentation directory.
    Example,
    /// Under a directory of third-party code (`third_party/`, `deps/`,
    /// `bundled/`) that the task does not name.
    Vendored,
}

/// How many kinds of evidence there are.
pub const FEATURES: usize = 19;

impl Feature {
    /// Every feature in vector order: a feature's position here is its slot in
    /// [`FileFeatures`] and [`Weights`].
    pub const ALL: [Feature; FEATURES] = [
        Feature::Bm25,
        Feature::Chunk,
        Feature::Dense,
        Feature::Path,
        Feature::Frame,
        Feature::Module,
        Feature::Defines,
        Feature::DefinesCode,
        Feature::Stem,
        Feature::Area,
        Feature::Message,
        Feature::Snippet,
        Feature::DenseFile,
        Feature::Size,
        Feature::Imported,
        Feature::Test,
        Feature::NonCode,
        Feature::Example,
        Feature::Vendored,
    ];

    /// Where the factors begin in [`Feature::ALL`].
    pub const FACTORS: usize = 15;

    /// The feature's `snake_case` name, as `lode bench learn` reports and dumps it.
    pub const fn name(self) -> &'static str {
        match self {
            Feature::Bm25 => "bm25",
            Feature::Chunk => "chunk",
            Feature::Dense => "dense",
            Feature::Path => "path",
            Feature::Frame => "frame",
            Feature::Module => "module",
            Feature::Defines => "defines",
            Feature::DefinesCode => "defines_code",
            Feature::Stem => "stem",
            Feature::Area => "area",
            Feature::Message => "message",
            Feature::Snippet => "snippet",
            Feature::DenseFile => "dense_file",
            Feature::Size => "size",
            Feature::Imported => "imported",
            Feature::Test => "test",
            Feature::NonCode => "non_code",
            Feature::Example => "example",
            Feature::Vendored => "vendored",
        }
    }
}

/// One candidate file's evidence, by [`Feature`]: scores relative to the
/// best candidate of the same task (0–1), flags 0 or 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileFeatures(pub [f64; FEATURES]);

impl FileFeatures {
    /// The value of `f`: 0–1 for a score, 0 or 1 for a flag.
    pub fn get(&self, f: Feature) -> f64 {
        self.0[f as usize]
    }

    /// Sets the value of `f`, replacing what was there (not clamped).
    pub fn set(&mut self, f: Feature, v: f64) {
        self.0[f as usize] = v;
    }

    /// Keeps the larger of the current value and `v`.
    pub(super) fn raise(&mut self, f: Feature, v: f64) {
        let slot = &mut self.0[f as usize];
        *slot = slot.max(v);
    }
}

/// How much each kind of evidence counts, by [`Feature`]. The defaults are
/// hand-set priors, each change to them measured on pairs mined from commit
/// histories disjoint from every evaluation set. `dense_file` is the one
/// taken from a fit (`lode bench learn`) once the built-in model was tuned
/// for code: the fit's other moves added little on held-out repositories
/// (see `docs/benchmarks.md`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights(pub [f64; FEATURES]);

impl Default for Weights {
    fn default() -> Weights {
        Weights([
            1.0, // bm25
            0.6, // chunk
            0.2, // dense
            1.5, // path
            1.0, // frame
            0.6, // module
            0.8, // defines
            0.3, // defines_code
            0.4, // stem
            0.3, // area
            0.6, // message
            0.8, // snippet
            1.2, // dense_file
            0.1, // size
            0.0, // imported
            0.3, // test
            0.2, // non_code
            0.6, // example
            0.5, // vendored
        ])
    }
}

impl Weights {
    /// The file's score: the weighted sum of its evidence, times the factors
    /// of its flags.
    pub fn score(&self, f: &FileFeatures) -> f64 {
        let (add, factors) = Feature::ALL.split_at(Feature::FACTORS);
        let sum: f64 = add.iter().map(|&k| self.0[k as usize] * f.get(k)).sum();
        factors
            .iter()
            .filter(|&&k| f.get(k) > 0.0)
            .fold(sum, |s, &k| s * self.0[k as usize])
    }
}
