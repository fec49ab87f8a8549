//! TCP endpoints: sender, receiver, connection establishment, RTT/RTO estimation.

pub mod config;
pub mod handshake;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use config::{CcKind, TcpConfig};
pub use receiver::Receiver;
pub use rtt::{RttConfig, RttEstimator};
pub use handshake::{Listener, Opener};
pub use sender::{Segment, Sender, State};
