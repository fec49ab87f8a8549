//! TCP with selective acknowledgements: Reno's window management (RFC 5681)
//! with the SACK-based loss recovery of RFC 6675, driven by the receiver's
//! SACK blocks (RFC 2018). The scoreboard, `IsLost`, `pipe` and `NextSeg`
//! live in the sender, which runs them for every controller whose
//! [`crate::cc::AnyCc::recovery`] is `Sack`; the window is Reno's.

/// SACK TCP's window is Reno's.
pub type Sack = super::reno::Reno;
