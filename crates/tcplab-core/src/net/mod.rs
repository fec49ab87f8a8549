//! The network: packets, queues, links, routing and topology.

pub mod link;
pub mod packet;
pub mod queue;
pub mod routing;

pub use link::{Link, LinkReport, Offer};
pub use packet::{Packet, PacketId, PacketKind, PacketPool, MAX_SACK};
pub use queue::{DropTail, Limit, QueueDisc};
