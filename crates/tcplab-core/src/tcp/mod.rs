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

pub use config::{CcKind, NewRenoRecovery, SackLoss, SackRecovery, TcpConfig, TimeoutSsthresh};
pub use connection::{ConnEvent, Connection, Timer, Wire};
pub use handshake::{Listener, Opener};
pub use receiver::Receiver;
pub use rtt::{RttConfig, RttEstimator};
pub use sender::{Segment, Sender, State};

use crate::net::RouteHead;
use crate::time::{Dur, Time};

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
    /// With `cfg.clock_phase_random`, the key of the owner's clock phases
    /// (`engine::rng::component_key` of the seed and "tcp/" and the
    /// application's name), so that adding an application changes no other's.
    pub clock_key: u64,
    /// With `cfg.send_jitter`, the key of the owner's send delays
    /// (`component_key` of the seed and "jitter/" and the application's name).
    pub jitter_key: u64,
    /// Connections opened so far: the next one's draw is item `opened`.
    pub opened: u64,
}

/// The flow number of a free slot.
const VACANT: u32 = u32::MAX;

/// Every connection of a run: [`Connection::id`] is its slot in `conns`.
///
/// With [`Endpoints::recycle`] on, a slot is used again once its connection
/// has gone quiet for good ([`Endpoints::release`], [`Endpoints::free`]), so
/// a long run of short transfers keeps as many connections as are open at
/// once, not as many as it ever opened. A connection's flow number (the
/// order it was opened in, its row's `id`) is then kept beside its slot.
#[derive(Default)]
pub struct Endpoints {
    /// One per owner (application).
    pub profiles: Vec<Profile>,
    pub conns: Vec<Connection>,
    /// Slots are used again (set at build; off, a slot is its flow number).
    pub recycle: bool,
    /// Free slots, the last freed last.
    free: Vec<u32>,
    /// Per slot, with `recycle`: its connection's flow number.
    flows: Vec<u32>,
    /// Per slot, with `recycle`: its owner has done with it.
    released: Vec<bool>,
    /// Connections opened so far.
    opened: u32,
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

    /// The slot the next connection takes (a hint for prefetching).
    pub fn next_slot(&self) -> usize {
        self.free.last().map_or(self.conns.len(), |&s| s as usize)
    }

    /// Every connection in a slot, with its flow number.
    pub fn live(&self) -> impl Iterator<Item = (&Connection, u32)> {
        self.conns.iter().map(|c| (c, self.flow_of(c.id))).filter(|&(_, f)| f != VACANT)
    }

    /// The flow number of the connection in slot `c`.
    pub fn flow_of(&self, c: u32) -> u32 {
        if self.recycle {
            self.flows[c as usize]
        } else {
            c
        }
    }

    /// The owner of the connection in slot `c` has done with it: once
    /// nothing of it is left in the network ([`Endpoints::quiet`]), its slot
    /// may be freed.
    pub fn release(&mut self, c: u32) {
        self.released[c as usize] = true;
    }

    /// Whether the connection in slot `c` was released and can do nothing
    /// more: no timer of it is queued and no ACK held back. With none of
    /// its packets in the network, no event can reach it again.
    pub fn quiet(&self, c: u32) -> bool {
        self.released.get(c as usize).is_some_and(|&r| r) && self.conns[c as usize].idle()
    }

    /// Free slot `c` for a later connection.
    pub fn free(&mut self, c: u32) {
        debug_assert!(self.quiet(c));
        self.released[c as usize] = false;
        self.flows[c as usize] = VACANT;
        self.free.push(c);
    }

    /// A new connection of `owner` from its server `server` (0: its `src`),
    /// not yet opened: returns its slot.
    pub fn create(&mut self, owner: u32, server: u32, size: Option<u64>, tag: u64, now: Time) -> u32 {
        let flow = self.opened;
        self.opened += 1;
        let reuse = if self.recycle { self.free.pop() } else { None };
        let id = reuse.unwrap_or(self.conns.len() as u32);
        let p = &mut self.profiles[owner as usize];
        let (data, ack, first) = match server {
            0 => (p.data_route, p.ack_route, p.heads),
            i => p.more[i as usize - 1],
        };
        let mut c = Connection::new(id, owner, tag, data, ack, &p.cfg, size, p.open_bytes, now);
        c.heads = first;
        if p.cfg.clock_phase_random {
            // ns-2's boot_time_: Random::uniform(tcp_tick_) at the agent's reset.
            let tick = p.cfg.rtt.granularity.as_ns().max(1);
            c.sender.rtt.set_phase(crate::engine::rng::keyed_u64(p.clock_key, p.opened) % tick);
        }
        if p.cfg.send_jitter > Dur::ZERO {
            c.set_send_jitter(p.cfg.send_jitter, crate::engine::rng::keyed_u64(p.jitter_key, p.opened));
        }
        p.opened += 1;
        match reuse {
            Some(slot) => {
                self.conns[slot as usize] = c;
                self.flows[slot as usize] = flow;
            }
            None => {
                self.conns.push(c);
                if self.recycle {
                    self.flows.push(flow);
                    self.released.push(false);
                }
            }
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    fn profile(seed: u64, random: bool, name: &str) -> Profile {
        let mut cfg = TcpConfig { clock_phase_random: random, ..Default::default() };
        cfg.rtt.granularity = Dur::from_ms(100);
        cfg.rtt.phase_ns = 5_000_000;
        let none = (RouteHead::NONE, RouteHead::NONE);
        let clock_key = crate::engine::rng::component_key(seed, &format!("tcp/{name}"));
        Profile { cfg, data_route: 0, ack_route: 1, heads: none, open_bytes: 0, more: Vec::new(), clock_key, jitter_key: 0, opened: 0 }
    }

    fn endpoints(seed: u64, random: bool) -> Endpoints {
        Endpoints { profiles: vec![profile(seed, random, "a")], ..Default::default() }
    }

    fn phases(e: &mut Endpoints, n: u32) -> Vec<u64> {
        for _ in 0..n {
            e.create(0, 0, Some(1000), 0, Time::ZERO);
        }
        e.conns.iter().map(|c| c.sender.rtt.phase_ns()).collect()
    }

    #[test]
    fn a_random_clock_phase_is_drawn_per_connection_from_the_seed() {
        // A fixed phase is every connection's.
        assert_eq!(phases(&mut endpoints(1, false), 3), vec![5_000_000; 3]);
        // A random one differs between connections, stays within one tick of
        // 100 ms, and is the same for the same seed and connection number.
        let a = phases(&mut endpoints(1, true), 50);
        assert!(a.iter().all(|&p| p < 100_000_000));
        let mut distinct = a.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 50);
        assert_eq!(a, phases(&mut endpoints(1, true), 50));
        assert_ne!(a, phases(&mut endpoints(2, true), 50));
        // Spread over the tick: 50 draws put some in each half.
        assert!(a.iter().any(|&p| p < 50_000_000) && a.iter().any(|&p| p >= 50_000_000));
    }

    #[test]
    fn an_owners_clock_phases_do_not_depend_on_other_owners_connections() {
        let alone = phases(&mut endpoints(1, true), 4);
        // A second owner with its own key opens connections between the first one's.
        let mut e = endpoints(1, true);
        e.profiles.push(profile(1, true, "b"));
        for _ in 0..4 {
            e.create(1, 0, Some(1000), 0, Time::ZERO);
            e.create(0, 0, Some(1000), 0, Time::ZERO);
        }
        let mine: Vec<u64> = e.conns.iter().filter(|c| c.owner == 0).map(|c| c.sender.rtt.phase_ns()).collect();
        let theirs: Vec<u64> = e.conns.iter().filter(|c| c.owner == 1).map(|c| c.sender.rtt.phase_ns()).collect();
        assert_eq!(mine, alone);
        assert_ne!(theirs, alone);
    }
}
