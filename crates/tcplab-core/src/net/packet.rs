//! Packets and the packet pool.
//!
//! Packets live in one pool and are named by their index, so forwarding moves
//! a `u32` and the per-packet path allocates nothing once the pool has grown
//! to the run's peak population.

use crate::time::Time;

/// Index of a packet in the [`PacketPool`].
pub type PacketId = u32;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// A data segment from sender to receiver.
    Data,
    /// A pure acknowledgement from receiver to sender.
    Ack,
}

#[derive(Copy, Clone, Debug)]
pub struct Packet {
    /// Connection (transfer) this packet belongs to.
    pub conn: u32,
    /// Precomputed route (index into the simulator's route table).
    pub route: u32,
    /// Number of links of the route already crossed.
    pub hop: u32,
    /// Bytes on the wire, headers included.
    pub wire_bytes: u32,
    pub kind: PacketKind,
    /// Data: first payload byte's sequence number. Ack: unused.
    pub seq: u64,
    /// Data: payload bytes.
    pub len: u32,
    /// Ack: cumulative acknowledgement (next byte expected).
    pub ack: u64,
    /// Data: whether this is a retransmission.
    pub retx: bool,
    /// When the packet left its source.
    pub sent: Time,
}

/// A free-list pool of packets.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: usize,
    /// Packets ever allocated (the number of distinct packets the run made).
    pub created: u64,
}

impl PacketPool {
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.created += 1;
        self.live += 1;
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets allocated and not yet freed.
    pub fn live(&self) -> usize {
        self.live
    }

    /// The pool's high-water mark.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}
