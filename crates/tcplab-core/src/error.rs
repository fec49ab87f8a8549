//! Errors of the core.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// The scenario document is not of the expected form.
    #[error("scenario: {0}")]
    Parse(String),
    /// A field names something that does not exist or has a value out of range.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// No path connects an application's endpoints.
    #[error("{field}: no route from '{src}' to '{dst}'")]
    NoRoute { field: String, src: String, dst: String },
}

pub type Result<T> = std::result::Result<T, Error>;
