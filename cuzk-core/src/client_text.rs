//! Text a client sent (ids, circuit specs), as errors and log lines show
//! it: clipped to [`SHOWN_CHARS`] characters with its length.
//!
//! Errors go back to the client in gRPC's status message, which travels in
//! a header: a long id echoed whole (an error can name it more than once)
//! pushes the reply past the metadata limit, and the client gets "metadata
//! size exceeds hard limit" instead of the error. Logs shall not carry
//! megabytes of a hostile id either. Every place that puts a client's
//! string into an error or a log line shows it through [`clipped`].

use std::fmt;

/// How many characters of a client string are shown.
pub const SHOWN_CHARS: usize = 128;

/// `s` for an error or log line: whole when short, else its first
/// [`SHOWN_CHARS`] characters, then `…` and its length in bytes. Display
/// shows it bare, Debug quoted (as `{:?}` of a str, the cut outside the
/// quotes).
pub fn clipped(s: &str) -> Clipped<'_> {
    Clipped(s)
}

#[derive(Clone, Copy)]
pub struct Clipped<'a>(&'a str);

impl<'a> Clipped<'a> {
    /// The part shown, and whether anything was cut.
    fn shown(&self) -> (&'a str, bool) {
        match self.0.char_indices().nth(SHOWN_CHARS) {
            Some((at, _)) => (&self.0[..at], true),
            None => (self.0, false),
        }
    }
}

impl fmt::Display for Clipped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shown() {
            (s, false) => f.write_str(s),
            (s, true) => write!(f, "{s}… ({} bytes)", self.0.len()),
        }
    }
}

impl fmt::Debug for Clipped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shown() {
            (s, false) => write!(f, "{s:?}"),
            (s, true) => write!(f, "{s:?}… ({} bytes)", self.0.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_shown_whole_long_text_clipped_with_its_length() {
        assert_eq!(clipped("porep-32g").to_string(), "porep-32g");
        assert_eq!(format!("{:?}", clipped("a\"b")), "\"a\\\"b\"");
        let long = "x".repeat(10_000);
        let shown = clipped(&long).to_string();
        assert_eq!(shown, format!("{}… (10000 bytes)", "x".repeat(SHOWN_CHARS)));
        assert_eq!(format!("{:?}", clipped(&long)), format!("\"{}\"… (10000 bytes)", "x".repeat(SHOWN_CHARS)));
        // Cut at a character boundary.
        let wide = "é".repeat(200);
        assert_eq!(clipped(&wide).to_string(), format!("{}… (400 bytes)", "é".repeat(SHOWN_CHARS)));
        assert_eq!(clipped(&"y".repeat(SHOWN_CHARS)).to_string(), "y".repeat(SHOWN_CHARS));
    }
}
