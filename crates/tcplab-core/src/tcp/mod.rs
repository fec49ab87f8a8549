//! TCP: connections and their parts.
//!
//! - [`connection`]: a [`Connection`] (sender, receiver, handshake, client
//!   messages, timers) and the [`Wire`] it talks through;
//! - [`sender`], [`receiver`], [`handshake`], [`rtt`]: the parts, each of
//!   which takes `now` and reports its next deadline, so each is unit-tested
//!   without an engine;
//! - [`config`]: per-connection settings.
//!
//! [`Endpoints`] holds every connection of a run and the settings each
//! owner's connections are opened with.

pub mod config;
pub mod connection;
pub mod handshake;
pub mod ops;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use config::{CcKind, NewRenoRecovery, SackRecovery, TcpConfig, TimeoutSsthresh};
pub use connection::{ConnEvent, Connection, Timer, Wire};
pub use handshake::{Listener, Opener};
pub use receiver::Receiver;
pub use rtt::{RttConfig, RttEstimator};
pub use sender::{Segment, Sender, State};

use crate::net::RouteHead;
use crate::time::Time;

/// How an owner's connections are opened: their settings, routes (by the
/// network's route numbers) and the size of the client's opening message.
pub struct Profile {
    pub cfg: TcpConfig,
    pub data_route: u32,
    pub ack_route: u32,
    /// The heads of the two routes (set by the build once routes exist).
    pub heads: (RouteHead, RouteHead),
    pub open_bytes: u32,
    /// The routes (data, ACK) and their heads from the owner's extra
    /// servers, in order: connections opened from server `i > 0` use entry `i - 1`.
    pub more: Vec<(u32, u32, (RouteHead, RouteHead))>,
}

#[derive(Default)]
pub struct Endpoints {
    /// One per owner (application).
    pub profiles: Vec<Profile>,
    pub conns: Vec<Connection>,
}

impl Endpoints {
    /// What a packet capture shows of connection `c`'s headers.
    pub fn capture_header(&self, c: u32, net: &crate::net::Network) -> crate::net::capture::FlowHeader {
        let conn = &self.conns[c as usize];
        let cfg = &self.profiles[conn.owner as usize].cfg;
        let (server, client) = net.route_ends(conn.routes().0);
        crate::net::capture::FlowHeader::new(c, conn.owner, client, server, cfg.mss, cfg.max_window, cfg.sack_blocks > 0, cfg.handshake)
    }

    /// Make room for `n` more connections, and touch that memory now, so
    /// that the run neither moves the connections as their number grows
    /// nor takes the page faults of their first use.
    pub fn reserve(&mut self, n: usize) {
        self.conns.reserve_exact(n);
        let spare = self.conns.spare_capacity_mut();
        // Writing bytes into uninitialized spare capacity is sound: it
        // stays uninitialized as far as the vector is concerned.
        unsafe { std::ptr::write_bytes(spare.as_mut_ptr(), 0, spare.len()) };
    }

    /// A new connection of `owner` from its server `server` (0: its `src`),
    /// not yet opened: returns its number.
    pub fn create(&mut self, owner: u32, server: u32, size: Option<u64>, tag: u64, now: Time) -> u32 {
        let id = self.conns.len() as u32;
        let p = &self.profiles[owner as usize];
        let (data, ack, first) = match server {
            0 => (p.data_route, p.ack_route, p.heads),
            i => p.more[i as usize - 1],
        };
        let mut c = Connection::new(id, owner, tag, data, ack, &p.cfg, size, p.open_bytes, now);
        c.heads = first;
        self.conns.push(c);
        id
    }
}
