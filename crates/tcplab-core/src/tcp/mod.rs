//! TCP endpoints: sender, receiver, RTT/RTO estimation.

pub mod config;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use config::{CcKind, TcpConfig};
pub use receiver::Receiver;
pub use rtt::{RttConfig, RttEstimator};
pub use sender::{Segment, Sender};
