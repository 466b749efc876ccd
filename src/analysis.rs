//! Tokenisation shared by indexing and querying (one analyser, versioned).
//!
//! Owns: case and accent folding, identifier splitting (kept whole and split), CJK
//! character bigrams, the token length cap. Must not import anything but std and
//! `unicode-normalization`: every index and the query path depend on it, and its
//! output is part of the on-disk format, so any change bumps [`LEXICON_VERSION`].

/// Version of the analysis rules; recorded in the manifest. Bump on any change of output.
pub const LEXICON_VERSION: u32 = 1;

/// Longest term kept, in bytes after folding; longer whole tokens are dropped (their
/// split parts, if short enough, are kept).
pub const MAX_TERM_BYTES: usize = 64;
