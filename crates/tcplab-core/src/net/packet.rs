//! Packets and the packet pool.
//!
//! Packets live in one pool and are named by their index, so forwarding moves
//! a `u32` and the per-packet path allocates nothing once the pool has grown
//! to the run's peak population.

/// Index of a packet in the [`PacketPool`].
pub type PacketId = u32;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// A data segment from sender (server) to receiver (client).
    Data,
    /// An acknowledgement from receiver to sender.
    Ack,
    /// Connection opening (SYN), client to server.
    Syn,
    /// Its answer, server to client.
    SynAck,
    /// A segment of client data: the ACK of the SYN-ACK carrying the
    /// client's opening message, or a later message on the open connection.
    /// Named "request" in scenarios and results.
    ClientData,
    /// The server's ACK of the client's FIN.
    Close,
}

impl PacketKind {
    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Data => "data",
            PacketKind::Ack => "ack",
            PacketKind::Syn => "syn",
            PacketKind::SynAck => "synack",
            PacketKind::ClientData => "request",
            PacketKind::Close => "close",
        }
    }

    pub fn parse(s: &str) -> Option<PacketKind> {
        Some(match s {
            "data" => PacketKind::Data,
            "ack" => PacketKind::Ack,
            "syn" => PacketKind::Syn,
            "synack" => PacketKind::SynAck,
            "request" => PacketKind::ClientData,
            "close" => PacketKind::Close,
            _ => return None,
        })
    }
}

/// Most SACK blocks an ACK carries.
pub const MAX_SACK: usize = 4;

#[derive(Copy, Clone, Debug)]
pub struct Packet {
    /// Connection (transfer) this packet belongs to.
    pub conn: u32,
    /// Precomputed route (index into the simulator's route table).
    pub route: u32,
    /// Number of links of the route already crossed.
    pub hop: u16,
    /// Number of links of the route (set when the packet is sent), so a
    /// packet tells whether it ends its route without a read of the route.
    pub hops: u16,
    /// Bytes on the wire, headers included.
    pub wire_bytes: u32,
    pub kind: PacketKind,
    /// Data: this segment ends the transfer (FIN). Ack: the client closes (FIN).
    pub fin: bool,
    /// Data: whether this is a retransmission.
    pub retx: bool,
    /// Ack: number of SACK blocks.
    pub nsack: u8,
    /// Data: payload bytes.
    pub len: u32,
    /// Data: first payload byte's sequence number. Ack: the advertised
    /// window ([`Packet::window`]). Client data: the message's number.
    pub seq: u64,
    /// Ack and client data: cumulative acknowledgement (next byte expected).
    /// Data, SYN-ACK and close: the client message bytes the server has
    /// taken in (what a capture shows them acknowledging).
    pub ack: u64,
}

/// SACK blocks of an ACK, as offsets above its cumulative acknowledgement.
/// Kept beside the pool rather than in [`Packet`], so packets stay small.
pub type SackBlocks = [(u32, u32); MAX_SACK];

impl Packet {
    /// Ack: the receiver's advertised window, bytes (an ACK has no sequence
    /// range of its own, so the window travels in `seq`).
    #[inline]
    pub fn window(&self) -> u64 {
        debug_assert_eq!(self.kind, PacketKind::Ack);
        self.seq
    }

    #[inline]
    pub fn set_window(&mut self, window: u64) {
        debug_assert_eq!(self.kind, PacketKind::Ack);
        self.seq = window;
    }

    /// A packet of `kind` with every optional field empty.
    pub fn new(conn: u32, route: u32, kind: PacketKind, wire_bytes: u32) -> Packet {
        Packet {
            conn,
            route,
            hop: 0,
            hops: 0,
            wire_bytes,
            kind,
            fin: false,
            retx: false,
            nsack: 0,
            len: 0,
            seq: 0,
            ack: 0,
        }
    }
}

/// A free-list pool of packets.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    sacks: Vec<SackBlocks>,
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
                self.sacks.push([(0, 0); MAX_SACK]);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.free.push(id);
    }

    /// Where packet `id` lives (for a prefetch; may be past the end for a stale id).
    #[inline]
    pub fn slot_ptr(&self, id: PacketId) -> *const Packet {
        self.slots.as_ptr().wrapping_add(id as usize)
    }

    /// Slot `id`, if the pool has grown that far (whether or not it is live).
    #[inline]
    pub fn slots_get(&self, id: PacketId) -> Option<&Packet> {
        self.slots.get(id as usize)
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// The SACK blocks slot of packet `id` (meaningful for its first `nsack` entries).
    #[inline]
    pub fn sack(&self, id: PacketId) -> &SackBlocks {
        &self.sacks[id as usize]
    }

    #[inline]
    pub fn sack_mut(&mut self, id: PacketId) -> &mut SackBlocks {
        &mut self.sacks[id as usize]
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
