//! TCP NewReno, RFC 6582: Reno's window management (RFC 5681) with a
//! recovery that lasts until every segment outstanding at the start of
//! recovery (the "recover" point) is acknowledged. Only the recovery differs
//! from Reno, and it lives in the sender (RFC 6582 section 3.2, step 3:
//! partial ACKs), chosen by [`crate::cc::AnyCc::recovery`]; the window is
//! Reno's.

/// NewReno's window is Reno's.
pub type NewReno = super::reno::Reno;
