//! Errors from the C ABI: a code plus the message native/ wrote.

use std::fmt;

use crate::ffi;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// A CUDA call failed; the device is still usable.
    Cuda,
    /// A CUDA error that leaves the device unusable (a sticky error such as
    /// an illegal address, or no device or driver).
    DeviceLost,
    InvalidArgument,
    OutOfMemory,
    NoCuda,
    Internal,
    Unknown(i32),
}

impl ErrorCode {
    fn from_raw(code: i32) -> Self {
        use ffi::cuzk_code as C;
        match code {
            c if c == C::CUZK_ERR_CUDA as i32 => Self::Cuda,
            c if c == C::CUZK_ERR_DEVICE_LOST as i32 => Self::DeviceLost,
            c if c == C::CUZK_ERR_INVALID_ARGUMENT as i32 => Self::InvalidArgument,
            c if c == C::CUZK_ERR_OUT_OF_MEMORY as i32 => Self::OutOfMemory,
            c if c == C::CUZK_ERR_NO_CUDA as i32 => Self::NoCuda,
            c if c == C::CUZK_ERR_INTERNAL as i32 => Self::Internal,
            c => Self::Unknown(c),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cuzk native error ({:?}): {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(message: impl Into<String>) -> Self {
        Error { code: ErrorCode::InvalidArgument, message: message.into() }
    }
}

/// Calls a C function taking a trailing `cuzk_error *` and turns its code
/// into a Result.
pub(crate) fn call(f: impl FnOnce(*mut ffi::cuzk_error) -> i32) -> Result<()> {
    let mut err = ffi::cuzk_error::default();
    let code = f(&mut err);
    if code == 0 {
        return Ok(());
    }
    let bytes: Vec<u8> = err.message.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    Err(Error { code: ErrorCode::from_raw(code), message: String::from_utf8_lossy(&bytes).into_owned() })
}
