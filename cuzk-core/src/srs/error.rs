//! Errors of reading parameter files: each names the section and the byte
//! offset where the file went wrong.

/// Why one point was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointFault {
    /// Flag bits or coordinates that are not a valid uncompressed encoding.
    BadEncoding,
    NotOnCurve,
    NotInSubgroup,
    /// The point at infinity, which no valid query contains.
    Infinity,
}

impl std::fmt::Display for PointFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PointFault::BadEncoding => "not a valid uncompressed point encoding",
            PointFault::NotOnCurve => "point is not on the curve",
            PointFault::NotInSubgroup => "point is not in the prime-order subgroup",
            PointFault::Infinity => "point at infinity",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("truncated in section {section} at byte offset {offset}: need {needed} bytes, {available} left")]
    Truncated { section: &'static str, offset: usize, needed: usize, available: usize },
    #[error("section {section}, point {index} at byte offset {offset}: {fault}")]
    InvalidPoint { section: &'static str, index: usize, offset: usize, fault: PointFault },
    #[error("{extra} unexpected trailing bytes at byte offset {offset} after the last section")]
    TrailingBytes { offset: usize, extra: usize },
    #[error("section {section} at byte offset {offset}: {message}")]
    Inconsistent { section: &'static str, offset: usize, message: String },
}

impl ParamsError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        ParamsError::Io { path: path.display().to_string(), source }
    }
}
