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

impl Error {
    /// The scenario field the error is about, if it names one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::Parse(_) => None,
            Error::Invalid { field, .. } | Error::NoRoute { field, .. } => Some(field),
        }
    }

    /// What is wrong, without the field.
    pub fn message(&self) -> String {
        match self {
            Error::Parse(m) => m.clone(),
            Error::Invalid { message, .. } => message.clone(),
            Error::NoRoute { src, dst, .. } => format!("no route from '{src}' to '{dst}'"),
        }
    }
}
