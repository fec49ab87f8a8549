//! The network fabric: packets and their pool, queue disciplines, links,
//! routes, loss taps and the packet log.
//!
//! [`Network`] owns all of them. It takes a packet from an endpoint
//! ([`Network::send`]), forwards it link by link along its precomputed
//! route, and hands it back ([`Network::on_link`] returns a [`Delivery`])
//! when it reaches the last node of its route. It reads only packet headers
//! (route, hop, size, kind, flow): no TCP state and no application. It does
//! not own the clock or the event queue: whenever a link needs a wake-up (its
//! head packet's arrival), the caller's `wake(time, link, packet)` is told,
//! with the packet that will then arrive (a hint: the caller may load it
//! into cache ahead of the wake-up).

pub mod atm;
pub mod capture;
pub mod link;
pub mod packet;
pub mod queue;
pub mod routing;
pub mod tap;

pub use link::{Link, LinkReport, Offer};
pub use packet::{Packet, PacketId, PacketKind, PacketPool, MAX_SACK};
pub use queue::{DropTail, Limit, QueueDisc};
pub use tap::{LogRow, LossRule, Tap};

use crate::engine::prefetch;
use crate::time::{Dur, Time};
use atm::FrameOut;
use capture::{CaptureRow, Captures, FlowHeader};
use tap::{LOG_DEQUEUE, LOG_DROP, LOG_ENQUEUE};
pub use routing::RouteHead;
use routing::Routes;

/// A wake-up for link `l | PORT_WAKE` is one for `l`'s UBR port (a frame's
/// last cell arrives), not for its head packet.
pub const PORT_WAKE: u32 = 1 << 31;

/// The packet hint of a wake-up that names no packet (a port's).
pub const NO_PACKET: PacketId = u32::MAX;

/// SACK blocks as absolute byte ranges.
pub type SackList = [(u64, u64); MAX_SACK];

/// A packet that reached the end of its route, with its SACK blocks
/// (the first `packet.nsack` entries of `sack`).
#[derive(Copy, Clone, Debug)]
pub struct Delivery {
    pub packet: Packet,
    pub sack: SackList,
}

impl Delivery {
    pub fn sack(&self) -> &[(u64, u64)] {
        &self.sack[..self.packet.nsack as usize]
    }
}

pub struct Network {
    pub nodes: Vec<String>,
    pub links: Vec<Link>,
    routes: Routes,
    pool: PacketPool,
    /// Loss injection and logging, per link (whether to look is the link's `tapped`).
    taps: Vec<Tap>,
    /// The class of each registered flow (loss rules match on it).
    flow_class: Vec<u32>,
    /// With [`Network::count_flows`]: each flow's packets in the network,
    /// and the flows whose count fell to zero since [`Network::take_quiet`].
    flow_live: Vec<u32>,
    count_flows: bool,
    quiet: Vec<u32>,
    log: Vec<LogRow>,
    /// Packets still propagating at this time stay where they are.
    stop: Option<Time>,
    pub delivered: u64,
    pub dropped: u64,
    /// Scratch space for the frames a port finished.
    port_buf: Vec<FrameOut>,
    /// Packet captures, when any link is captured.
    captures: Option<Box<Captures>>,
}

impl Network {
    pub fn new(nodes: Vec<String>, mut links: Vec<Link>, routes: Routes, taps: Vec<Tap>, stop: Option<Time>) -> Network {
        for (l, t) in links.iter_mut().zip(&taps) {
            l.tapped = t.log || !t.rules.is_empty();
        }
        Network { nodes, links, routes, pool: PacketPool::default(), taps, flow_class: Vec::new(), flow_live: Vec::new(), count_flows: false, quiet: Vec::new(), log: Vec::new(), stop, delivered: 0, dropped: 0, port_buf: Vec::new(), captures: None }
    }

    /// Capture the links `captures` names (see [`capture`]).
    pub fn set_captures(&mut self, captures: Captures) {
        for (l, link) in self.links.iter_mut().enumerate() {
            link.tapped |= captures.captures(l as u32);
        }
        self.captures = Some(Box::new(captures));
    }

    /// Start loading packet `pkt`'s header (a hint; any id is harmless).
    #[inline]
    pub fn prefetch_packet(&self, pkt: PacketId) {
        prefetch(self.pool.slot_ptr(pkt));
    }

    /// Prefetch, second stage: the head packet `pkt` of an arrival two
    /// events ahead (its header prefetched an event ago) names its route
    /// entry, to start loading (where the route ends, the reply's route
    /// entry, built next to it, is read next), and its connection and kind,
    /// returned with whether that arrival ends its route (so the connection
    /// will be read).
    #[inline]
    pub fn prefetch_route_of(&self, pkt: PacketId) -> Option<(u32, PacketKind, bool)> {
        let p = self.pool.slots_get(pkt)?;
        prefetch(self.routes.entry_ptr(p.route));
        Some((p.conn, p.kind, p.hop + 1 >= p.hops))
    }

    /// Prefetch, last stage: link `l`'s arrival of `pkt` comes next, and
    /// the link, packet and route entry should be in cache by now. Start
    /// loading the packet in flight after `pkt` and the links `pkt` goes on
    /// to; when its route ends here, return its connection and kind.
    #[inline]
    pub fn prefetch_arrival(&self, l: u32, pkt: PacketId) -> Option<(u32, PacketKind)> {
        let link = self.links.get(l as usize)?;
        link.prefetch_second();
        let p = self.pool.slots_get(pkt)?;
        let (next, len) = (usize::from(p.hop) + 1, usize::from(p.hops));
        if next >= len {
            return Some((p.conn, p.kind));
        }
        let r = p.route as usize;
        for &n in self.routes.flat().get(r + 1 + next..r + 1 + len.min(next + 3))? {
            self.prefetch_link_offer(n);
        }
        None
    }

    /// Start loading what link `l`'s head arrival reads: its line 0, and
    /// line 2 when more packets follow.
    #[inline]
    pub fn prefetch_link_arrival(&self, l: u32) {
        let n = self.links.as_ptr().wrapping_add(l as usize);
        prefetch(n);
        prefetch(n.cast::<u8>().wrapping_add(128));
    }

    /// Start loading what an offer to link `l` reads (its lines 0 and 1).
    #[inline]
    pub fn prefetch_link_offer(&self, l: u32) {
        let n = self.links.as_ptr().wrapping_add(l as usize);
        prefetch(n);
        prefetch(n.cast::<u8>().wrapping_add(64));
    }

    /// Whether any link is captured.
    pub fn capturing(&self) -> bool {
        self.captures.is_some()
    }

    /// The nodes a route runs from and to.
    pub fn route_ends(&self, r: u32) -> (u32, u32) {
        let route = self.route(r);
        let first = &self.links[route[0] as usize];
        let last = &self.links[route[route.len() - 1] as usize];
        (first.from, last.to)
    }

    /// Connection `flow` opens: what its capture headers say (when capturing).
    pub fn capture_flow(&mut self, flow: u32, header: FlowHeader) {
        if let Some(c) = self.captures.as_mut() {
            c.add_flow(flow, header);
        }
    }

    /// Flush the capture files: the captures written, or the first error.
    pub fn finish_captures(&mut self) -> Result<Vec<CaptureRow>, String> {
        self.captures.as_mut().map_or(Ok(Vec::new()), |c| c.finish())
    }

    /// Let the links that may hand packets on without an arrival event do so
    /// (see [`Link::set_advancing`] and [`advancing_links`]).
    pub fn enable_advancing(&mut self) {
        let ported: Vec<bool> = self.links.iter().map(|l| l.port.is_some()).collect();
        let feeds = self.port_feeders();
        for (l, on) in advancing_links(self.links.len(), &self.routes).into_iter().enumerate() {
            // A port takes frames in time order, as its input links' events bring them.
            self.links[l].set_advancing(on && !ported[l] && !feeds[l]);
        }
    }

    /// Links that hand packets to a UBR port.
    fn port_feeders(&self) -> Vec<bool> {
        let mut feeds = vec![false; self.links.len()];
        for r in self.routes.iter() {
            for w in r.windows(2) {
                if self.links[w[1] as usize].port.is_some() {
                    feeds[w[0] as usize] = true;
                }
            }
        }
        feeds
    }

    /// Cell switching: links feeding a UBR port hand a frame on at its
    /// first cell. Called once the routes are known.
    pub fn wire_ports(&mut self) {
        for (l, f) in self.port_feeders().into_iter().enumerate() {
            let link = &mut self.links[l];
            link.set_first_cell(f && link.is_atm());
        }
    }

    /// Register flow `flow` with its class: a new number (numbered from 0,
    /// in order), or, where flows are numbered by slots used again, one
    /// with none of its packets in the network.
    pub fn add_flow(&mut self, flow: u32, class: u32) {
        if flow as usize == self.flow_class.len() {
            self.flow_class.push(class);
            if self.count_flows {
                self.flow_live.push(0);
            }
            return;
        }
        debug_assert!(self.count_flows && self.flow_live[flow as usize] == 0, "flow {flow} registered again");
        self.flow_class[flow as usize] = class;
    }

    /// Count each flow's packets in the network (before any flow is added),
    /// so that a flow's number can be used again once none is left.
    pub fn count_flows(&mut self) {
        debug_assert!(self.flow_class.is_empty());
        self.count_flows = true;
    }

    /// Whether anything records packets or cells by their flow's number:
    /// a packet log, a capture, or a UBR port's per-VC occupancy.
    pub fn records_flows(&self) -> bool {
        self.taps.iter().any(|t| t.log) || self.captures.is_some() || self.links.iter().any(|l| l.port.is_some())
    }

    /// The packets of flow `flow` in the network (with [`Network::count_flows`]).
    pub fn flow_packets(&self, flow: u32) -> u32 {
        self.flow_live[flow as usize]
    }

    /// The flows whose last packet in the network was delivered or dropped
    /// since the last call, in that order; `into` is cleared first.
    pub fn take_quiet(&mut self, into: &mut Vec<u32>) {
        into.clear();
        std::mem::swap(into, &mut self.quiet);
    }

    /// Whether any flow went quiet since [`Network::take_quiet`].
    #[inline]
    pub fn any_quiet(&self) -> bool {
        !self.quiet.is_empty()
    }

    /// Packet `pkt` leaves the network (delivered or dropped).
    #[inline]
    fn free(&mut self, pkt: PacketId) {
        if self.count_flows {
            let f = self.pool.get(pkt).conn;
            let live = &mut self.flow_live[f as usize];
            *live -= 1;
            if *live == 0 {
                self.quiet.push(f);
            }
        }
        self.pool.free(pkt);
    }

    pub fn flow_class(&self, flow: u32) -> u32 {
        self.flow_class[flow as usize]
    }

    pub fn route(&self, r: u32) -> &[u32] {
        self.routes.get(r)
    }

    /// Route `r`'s first link and length, for [`Network::send`].
    pub fn route_head(&self, r: u32) -> RouteHead {
        self.routes.head(r)
    }

    /// Bandwidth-delay product of a path, bytes: its slowest link's rate
    /// times the round trip of a `seg`-byte packet out along `data` and a
    /// `hdr`-byte packet back along `ack`, with no queueing.
    pub fn path_bdp(&self, data: u32, ack: u32, seg: u64, hdr: u64) -> u64 {
        let one_way = |path: &[u32], bytes: u64| -> u64 {
            path.iter().map(|&l| {
                let l = &self.links[l as usize];
                l.delay.as_ns() + Dur::serialization(bytes, l.rate_bps).as_ns()
            }).sum()
        };
        let (data, ack) = (self.route(data), self.route(ack));
        let rtt_ns = one_way(data, seg) + one_way(ack, hdr);
        let rate = data.iter().map(|&l| self.links[l as usize].rate_bps).min().unwrap_or(0);
        (u128::from(rate) * u128::from(rtt_ns) / 8 / 1_000_000_000) as u64
    }

    /// How many `bytes`-byte packets `link` accepts now (a sending host's
    /// interface queue, for local congestion).
    pub fn room(&mut self, now: Time, link: u32, bytes: u32) -> u64 {
        self.links[link as usize].room(now, u64::from(bytes))
    }

    /// Put packet `p` (with `sack` blocks, absolute) on the first link of its
    /// route now. `head` is the head of the packet's route
    /// ([`Network::route_head`]), which the sender keeps, so that a send reads
    /// no route entry.
    #[inline]
    pub fn send(&mut self, now: Time, mut p: Packet, head: RouteHead, sack: &[(u64, u64)], wake: &mut impl FnMut(Time, u32, PacketId)) {
        debug_assert_eq!(head, self.routes.head(p.route), "the head of route {}", p.route);
        p.hops = head.hops;
        if self.count_flows {
            self.flow_live[p.conn as usize] += 1;
        }
        let ack = p.ack;
        let id = self.pool.alloc(p);
        if !sack.is_empty() {
            let slot = self.pool.sack_mut(id);
            for (k, &(s, e)) in sack.iter().enumerate() {
                slot[k] = ((s - ack) as u32, (e - ack) as u32);
            }
        }
        self.forward(now, id, head.first, wake);
    }

    /// The head packet of link `l` reaches the far node now: forward it, or
    /// return it if that node ends its route.
    #[inline]
    pub fn on_link(&mut self, now: Time, l: u32, wake: &mut impl FnMut(Time, u32, PacketId)) -> Option<Delivery> {
        if l & PORT_WAKE != 0 {
            self.port_step(now, l & !PORT_WAKE, wake);
            return None;
        }
        let (pkt, next) = self.links[l as usize].pop_arrival(now);
        if let Some((t, head)) = next {
            wake(t, l, head);
        }
        let p = self.pool.get_mut(pkt);
        p.hop += 1;
        if p.hop < p.hops {
            // The route is read only where it goes on.
            let link = self.routes.get(p.route)[p.hop as usize];
            self.forward(now, pkt, link, wake);
            return None;
        }
        let packet = *self.pool.get(pkt);
        let mut sack = [(0u64, 0u64); MAX_SACK];
        for (k, &(s, e)) in self.pool.sack(pkt)[..packet.nsack as usize].iter().enumerate() {
            sack[k] = (packet.ack + u64::from(s), packet.ack + u64::from(e));
        }
        self.free(pkt);
        self.delivered += 1;
        Some(Delivery { packet, sack })
    }

    /// Offer packet `pkt` to `link` at `at`; through advancing links, on to
    /// the links after them at the packet's arrival times. One out-of-line
    /// copy, with the link's offer inlined into it.
    #[inline(never)]
    fn forward(&mut self, mut at: Time, pkt: PacketId, mut link: u32, wake: &mut impl FnMut(Time, u32, PacketId)) {
        loop {
            let bytes = self.pool.get(pkt).wire_bytes;
            let tapped = self.links[link as usize].tapped;
            if tapped && !self.taps[link as usize].rules.is_empty() && self.tap_drops(at, pkt, link) {
                self.dropped += 1;
                self.free(pkt);
                return;
            }
            let cells = self.links[link as usize].is_atm();
            if cells && self.links[link as usize].port.is_some() {
                self.port_arrival(at, pkt, link, wake);
                return;
            }
            let l = &mut self.links[link as usize];
            let offer = if cells { l.offer_cells(at, pkt, bytes) } else { l.offer(at, pkt, bytes) };
            let advancing = l.is_advancing();
            if tapped {
                self.record_offer(at, link, &offer, pkt);
            }
            match offer {
                Offer::Dropped => {
                    self.dropped += 1;
                    self.free(pkt);
                    return;
                }
                Offer::Admitted { wake: w, arrive, .. } => {
                    if !advancing {
                        if let Some(t) = w {
                            wake(t, link, pkt);
                        }
                        return;
                    }
                    if self.stop.is_some_and(|s| arrive > s) {
                        return; // still propagating when the run ends
                    }
                    let p = self.pool.get_mut(pkt);
                    p.hop += 1;
                    link = self.routes.get(p.route)[p.hop as usize];
                    at = arrive;
                }
            }
        }
    }

    /// Log and capture an offer's outcome at a tapped link.
    #[cold]
    fn record_offer(&mut self, at: Time, link: u32, offer: &Offer, pkt: PacketId) {
        let log = self.taps[link as usize].log;
        match *offer {
            Offer::Dropped => {
                if log {
                    self.log_packet(at, link, LOG_DROP, pkt);
                }
                self.capture(at, link, pkt, true);
            }
            Offer::Admitted { tx_start, .. } => {
                if log {
                    self.log_packet(at, link, LOG_ENQUEUE, pkt);
                    self.log_packet(tx_start, link, LOG_DEQUEUE, pkt);
                }
                self.capture(tx_start, link, pkt, false);
            }
        }
    }

    /// Write packet `pkt` to `link`'s capture, if it has one (and `t` is not past the stop time).
    fn capture(&mut self, t: Time, link: u32, pkt: PacketId, dropped: bool) {
        let Some(c) = self.captures.as_mut() else { return };
        if self.stop.is_some_and(|s| t > s) {
            return;
        }
        let p = self.pool.get(pkt);
        let mut sack = [(0u64, 0u64); MAX_SACK];
        for (k, &(s, e)) in self.pool.sack(pkt)[..p.nsack as usize].iter().enumerate() {
            sack[k] = (p.ack + u64::from(s), p.ack + u64::from(e));
        }
        c.record(t, link, p, &sack[..p.nsack as usize], dropped);
    }

    /// A frame's first cell reaches `link`'s UBR port at `at`; its cells
    /// follow at the cell rate of the link it came over.
    #[cold]
    fn port_arrival(&mut self, at: Time, pkt: PacketId, link: u32, wake: &mut impl FnMut(Time, u32, PacketId)) {
        let p = *self.pool.get(pkt);
        let n = atm::cells(p.wire_bytes);
        let gap = if p.hop > 0 { self.links[self.routes.get(p.route)[p.hop as usize - 1] as usize].cell_time() } else { Dur::ZERO };
        if self.links[link as usize].tapped && self.taps[link as usize].log {
            self.log_packet(at, link, LOG_ENQUEUE, pkt);
        }
        let l = &mut self.links[link as usize];
        let last = l.port.as_mut().expect("a port").frame_arrives(at, pkt, p.conn, n, gap);
        wake(last, link | PORT_WAKE, NO_PACKET);
        self.port_outputs(link, wake);
    }

    /// Bring `link`'s port to `now` and pass on the frames it finished.
    #[cold]
    fn port_step(&mut self, now: Time, link: u32, wake: &mut impl FnMut(Time, u32, PacketId)) {
        self.links[link as usize].port.as_mut().expect("a port").advance(now);
        self.port_outputs(link, wake);
    }

    fn port_outputs(&mut self, link: u32, wake: &mut impl FnMut(Time, u32, PacketId)) {
        let mut done = std::mem::take(&mut self.port_buf);
        done.extend(self.links[link as usize].port.as_mut().expect("a port").take_out());
        let log = self.links[link as usize].tapped && self.taps[link as usize].log;
        for out in done.drain(..) {
            match out {
                FrameOut::Sent(pkt, last) => {
                    let n = atm::cells(self.pool.get(pkt).wire_bytes);
                    let l = &mut self.links[link as usize];
                    let cell = l.cell_time();
                    if let Some(t) = l.push_from_port(pkt, n, last) {
                        wake(t, link, pkt);
                    }
                    let tx_start = Time::from_ns(last.as_ns().saturating_sub(cell.as_ns()));
                    if log {
                        self.log_packet(tx_start, link, LOG_DEQUEUE, pkt);
                    }
                    self.capture(tx_start, link, pkt, false);
                }
                FrameOut::Lost(pkt, _) => {
                    let n = atm::cells(self.pool.get(pkt).wire_bytes);
                    self.links[link as usize].count_port_loss(n);
                    let t = self.links[link as usize].port.as_ref().map_or(Time::ZERO, |p| p.now());
                    if log {
                        self.log_packet(t, link, LOG_DROP, pkt);
                    }
                    self.capture(t, link, pkt, true);
                    self.dropped += 1;
                    self.free(pkt);
                }
            }
        }
        self.port_buf = done;
    }

    /// Loss injection at `link`: true if the packet is to be dropped.
    fn tap_drops(&mut self, at: Time, pkt: PacketId, link: u32) -> bool {
        let p = *self.pool.get(pkt);
        let class = self.flow_class[p.conn as usize];
        let mut drop = false;
        for r in &mut self.taps[link as usize].rules {
            drop |= r.drops(&p, class);
        }
        if drop {
            self.links[link as usize].count_injected_drop(p.wire_bytes);
            if self.taps[link as usize].log {
                self.log_packet(at, link, LOG_DROP, pkt);
            }
            self.capture(at, link, pkt, true);
        }
        drop
    }

    fn log_packet(&mut self, t: Time, link: u32, event: u8, pkt: PacketId) {
        self.log.push(LogRow::new(t, link, event, self.pool.get(pkt)));
    }

    /// The rows of the packet log so far.
    pub fn logged(&self) -> usize {
        self.log.len()
    }

    /// How many rows of the packet log are at `end` or before.
    pub fn logged_until(&self, end: Time) -> usize {
        self.log.iter().filter(|r| r.t <= end).count()
    }

    /// The packet log up to `end`, in time order (dequeues are known ahead of time).
    pub fn log_until(&self, end: Time) -> impl Iterator<Item = &LogRow> {
        // Sorted as (time, position) pairs side by side, so that no
        // comparison reaches into the rows; the log is nearly in order
        // already, which the standard sort's runs take advantage of.
        let mut order: Vec<(Time, usize)> = self.log.iter().enumerate().filter(|(_, r)| r.t <= end).map(|(i, r)| (r.t, i)).collect();
        order.sort();
        order.into_iter().map(|(_, i)| &self.log[i])
    }

    pub fn link_name(&self, l: u32) -> String {
        let l = &self.links[l as usize];
        format!("{}->{}", self.nodes[l.from as usize], self.nodes[l.to as usize])
    }

    pub fn packets_created(&self) -> u64 {
        self.pool.created
    }
    pub fn packets_live(&self) -> u64 {
        self.pool.live() as u64
    }
    pub fn pool_peak(&self) -> u64 {
        self.pool.capacity_used() as u64
    }
}

/// Which links may hand packets on without an arrival event: those whose
/// every packet continues onto a link fed by this link alone (no other link
/// and no local sender feeds it), by every route of the run.
pub fn advancing_links(n_links: usize, routes: &Routes) -> Vec<bool> {
    const INJECT: u32 = u32::MAX;
    const NONE: u32 = u32::MAX - 1;
    const MANY: u32 = u32::MAX - 2;
    // The single input of each link, or MANY.
    let mut input = vec![NONE; n_links];
    for r in routes.iter() {
        for (j, &l) in r.iter().enumerate() {
            let from = if j == 0 { INJECT } else { r[j - 1] };
            let slot = &mut input[l as usize];
            *slot = match *slot {
                NONE => from,
                x if x == from => x,
                _ => MANY,
            };
        }
    }
    let mut ok = vec![true; n_links];
    let mut used = vec![false; n_links];
    for r in routes.iter() {
        for (j, &l) in r.iter().enumerate() {
            used[l as usize] = true;
            let hands_on = r.get(j + 1).is_some_and(|&next| input[next as usize] == l);
            if !hands_on {
                ok[l as usize] = false;
            }
        }
    }
    ok.iter().zip(&used).map(|(&o, &u)| o && u).collect()
}

#[cfg(test)]
mod tests {
    use super::advancing_links;
    use crate::net::routing::Routes;

    fn routes(rs: &[&[u32]]) -> Routes {
        let mut out = Routes::default();
        for r in rs {
            out.push(r);
        }
        out
    }

    #[test]
    fn dumbbell_bottleneck_hands_on_but_access_links_do_not() {
        // Links: 0 s0->r0, 1 s1->r0, 2 r0->r1, 3 r1->k0, 4 r1->k1, 5 k0->r1, 6 r1->r0, 7 r0->s0.
        let rs = routes(&[&[0, 2, 3], &[1, 2, 4], &[5, 6, 7]]);
        let adv = advancing_links(9, &rs);
        // r0->r1 feeds r1->k0 and r1->k1, each fed by r0->r1 alone.
        assert!(adv[2]);
        // r1->r0 feeds r0->s0 alone.
        assert!(adv[6]);
        // s0->r0 feeds r0->r1, which two links feed; last hops deliver.
        assert!(!adv[0] && !adv[1] && !adv[3] && !adv[4] && !adv[7]);
        // k0->r1 feeds r1->r0, fed by k0->r1 alone.
        assert!(adv[5]);
        // An unused link never hands on.
        assert!(!adv[8]);
    }

    #[test]
    fn a_packet_knows_where_its_route_ends_without_reading_it() {
        use super::{DropTail, Limit, Link, Network, Packet, PacketKind, QueueDisc, Tap};
        use crate::time::{Dur, Time};
        // a -> b -> c -> d, three event-driven links; the route is 0, 1, 2.
        let link = |from, to| Link::new(from, to, 1_000_000_000, Dur::from_ms(1), QueueDisc::DropTail(DropTail { limit: Limit::Packets(10) }));
        let links = vec![link(0, 1), link(1, 2), link(2, 3)];
        let taps = (0..3).map(|_| Tap::default()).collect();
        let mut net = Network::new(["a", "b", "c", "d"].map(String::from).to_vec(), links, routes(&[&[0, 1, 2]]), taps, None);
        let mut wakes = Vec::new();
        let head = net.route_head(0);
        net.send(Time::ZERO, Packet::new(7, 0, PacketKind::Ack, 40), head, &[], &mut |t, l, p| wakes.push((t, l, p)));
        let mut seen = Vec::new();
        while let Some((t, l, pkt)) = wakes.pop() {
            let p = *net.pool.get(pkt);
            // The second prefetch stage's answer: connection, kind, and
            // whether this arrival ends the route.
            let (conn, kind, last) = net.prefetch_route_of(pkt).expect("a live packet");
            seen.push((l, p.hop, p.hops, last));
            assert_eq!((conn, kind), (7, PacketKind::Ack));
            let delivered = net.on_link(t, l, &mut |t, l, p| wakes.push((t, l, p)));
            assert_eq!(delivered.is_some(), last);
        }
        assert_eq!(seen, [(0, 0, 3, false), (1, 1, 3, false), (2, 2, 3, true)]);
    }

    #[test]
    fn the_packet_log_reads_in_time_order_ties_as_recorded_up_to_its_end() {
        use super::{DropTail, Limit, Link, LogRow, Network, Packet, PacketKind, QueueDisc, Tap};
        use crate::time::{Dur, Time};
        let links = vec![Link::new(0, 1, 1_000_000, Dur::from_ms(1), QueueDisc::DropTail(DropTail { limit: Limit::Packets(10) }))];
        let mut net = Network::new(["a", "b"].map(String::from).to_vec(), links, routes(&[&[0]]), vec![Tap::default()], None);
        // Dequeues are logged when known, ahead of the enqueues that follow them.
        let at = [5, 1, 3, 1, 9, 3, 2];
        for (i, &t) in at.iter().enumerate() {
            net.log.push(LogRow::new(Time::from_ns(t), 0, 0, &Packet::new(i as u32, 0, PacketKind::Data, 100)));
        }
        let read = |end: u64| -> Vec<u32> { net.log_until(Time::from_ns(end)).map(|r| r.flow).collect() };
        assert_eq!(read(100), [1, 3, 6, 2, 5, 0, 4]);
        assert_eq!(read(3), [1, 3, 6, 2, 5]);
        assert_eq!(net.logged_until(Time::from_ns(3)), 5);
    }

    #[test]
    fn a_second_input_or_a_local_sender_prevents_hand_on() {
        // Link 1 is fed by link 0 and, on another route, by a sender at its own node.
        let rs = routes(&[&[0, 1, 2], &[1, 2]]);
        let adv = advancing_links(3, &rs);
        assert!(!adv[0], "link 1 has a second input (injection)");
        assert!(adv[1], "link 2 is fed by link 1 alone");
        assert!(!adv[2]);
    }
}
