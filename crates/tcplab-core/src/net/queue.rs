//! Queue disciplines: the admission decision made when a packet reaches a busy link.

use serde::{Deserialize, Serialize};

/// A queue limit, in packets or in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

/// The occupancy a discipline sees: packets waiting for the transmitter,
/// not counting the one being transmitted.
#[derive(Copy, Clone, Debug)]
pub struct Occupancy {
    pub packets: u64,
    pub bytes: u64,
}

/// Tail drop: refuse a packet that would push the queue past its limit.
#[derive(Clone, Debug)]
pub struct DropTail {
    pub limit: Limit,
}

impl DropTail {
    pub fn admit(&self, q: Occupancy, pkt_bytes: u64) -> bool {
        match self.limit {
            Limit::Packets(n) => q.packets < n,
            Limit::Bytes(b) => q.bytes + pkt_bytes <= b,
        }
    }
}

/// Every queue discipline, dispatched by `match` on the per-packet path.
#[derive(Clone, Debug)]
pub enum QueueDisc {
    DropTail(DropTail),
}

impl QueueDisc {
    #[inline]
    pub fn admit(&mut self, q: Occupancy, pkt_bytes: u64) -> bool {
        match self {
            QueueDisc::DropTail(d) => d.admit(q, pkt_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn droptail_packet_and_byte_limits() {
        let d = DropTail { limit: Limit::Packets(2) };
        assert!(d.admit(Occupancy { packets: 1, bytes: 1500 }, 1500));
        assert!(!d.admit(Occupancy { packets: 2, bytes: 3000 }, 40));
        let b = DropTail { limit: Limit::Bytes(3000) };
        assert!(b.admit(Occupancy { packets: 1, bytes: 1500 }, 1500));
        assert!(!b.admit(Occupancy { packets: 1, bytes: 1500 }, 1501));
    }
}
