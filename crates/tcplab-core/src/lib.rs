//! tcplab-core: a packet-level discrete-event simulator for TCP
//! congestion-control experiments.
//!
//! - [`time`]: integer simulated time.
//! - [`engine`]: the event queue (FIFO ties), lazily cancelled timers, random streams.
//! - [`net`]: the fabric: packets and their pool, queues, links, routes, loss taps, the packet log.
//! - [`tcp`]: connections (sender, receiver, handshake, their timers) and their events.
//! - [`cc`]: congestion controllers behind one trait.
//! - [`app`]: workloads as state machines reacting to connection events.
//! - [`stats`]: traces, counters and the result tables.
//! - [`scenario`] and [`build`]: the normalized scenario and the parts built from it.
//! - [`sim`]: the event loop, wiring the parts together.

pub mod app;
pub mod build;
pub mod cc;
pub mod engine;
pub mod error;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod tcp;
#[cfg(test)]
mod testkit;
pub mod time;
pub mod toml_json;

pub use error::{Error, Result};
pub use sim::{check_json, run_json, run_json_columns, run_json_encoded, run_json_with, Simulator};
