//! Taps on a link direction: loss injection rules and the packet log.
//!
//! A rule matches packets by flow class (an opaque number the owner of a
//! flow gives when it registers the flow; the simulator uses the
//! application's index) and by packet kind, and drops the n-th matching
//! packets, or each one with a probability from its own random stream.

use super::packet::{Packet, PacketKind};
use crate::engine::rng::RngStream;
use crate::time::Time;

pub struct LossRule {
    pub class: Option<u32>,
    pub kind: Option<PacketKind>,
    /// Ordinals (1-based, sorted, unique) of the matching packets to drop.
    pub nth: Vec<u64>,
    pub next: usize,
    pub seen: u64,
    pub rate: Option<f64>,
    pub rng: RngStream,
}

impl LossRule {
    /// Count `p` (of flow class `class`) if it matches; true if it is to be dropped.
    pub fn drops(&mut self, p: &Packet, class: u32) -> bool {
        if self.class.is_some_and(|a| a != class) || self.kind.is_some_and(|k| k != p.kind) {
            return false;
        }
        let mut drop = false;
        self.seen += 1;
        while self.next < self.nth.len() && self.nth[self.next] < self.seen {
            self.next += 1;
        }
        if self.nth.get(self.next) == Some(&self.seen) {
            self.next += 1;
            drop = true;
        }
        if let Some(rate) = self.rate {
            if self.rng.uniform01() < rate {
                drop = true;
            }
        }
        drop
    }
}

/// Loss rules and logging of one link direction; empty unless asked for.
#[derive(Default)]
pub struct Tap {
    pub rules: Vec<LossRule>,
    pub log: bool,
}

pub const LOG_ENQUEUE: u8 = 0;
pub const LOG_DEQUEUE: u8 = 1;
pub const LOG_DROP: u8 = 2;
pub const LOG_EVENTS: [&str; 3] = ["enqueue", "dequeue", "drop"];

/// One packet event on a logged link.
#[derive(Copy, Clone, Debug)]
pub struct LogRow {
    pub t: Time,
    pub link: u32,
    pub event: u8,
    pub flow: u32,
    pub kind: PacketKind,
    /// Data: the first byte; ACK: the acknowledgement; others: the header's sequence field.
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
}

impl LogRow {
    pub fn new(t: Time, link: u32, event: u8, p: &Packet) -> LogRow {
        let seq = if p.kind == PacketKind::Ack { p.ack } else { p.seq };
        LogRow { t, link, event, flow: p.conn, kind: p.kind, seq, len: p.len, retx: p.retx }
    }
}
