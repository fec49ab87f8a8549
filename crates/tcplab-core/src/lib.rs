//! tcplab-core: a packet-level discrete-event simulator for TCP
//! congestion-control experiments.
//!
//! - [`time`]: integer simulated time.
//! - [`engine`]: the event queue and random streams.
//! - [`net`]: packets, queues, links, routing.
//! - [`tcp`]: sender, receiver, RTT/RTO.
//! - [`cc`]: congestion controllers behind one trait.
//! - [`app`]: applications that open transfers.
//! - [`stats`]: result tables.
//! - [`scenario`] and [`sim`]: the normalized scenario and the simulator that runs it.

pub mod app;
pub mod cc;
pub mod engine;
pub mod error;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod time;

pub use error::{Error, Result};
pub use sim::{run_json, Simulator};
