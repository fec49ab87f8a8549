//! A unidirectional link: a FIFO queue, a transmitter of fixed rate, and a
//! propagation delay.
//!
//! The link is computed lazily, in the manner of htsim's pipe: when a packet
//! is admitted, its transmission start (`max(now, end of the previous
//! transmission)`), its transmission end and its arrival at the far node are
//! all known at once, because the queue is FIFO and the rate fixed. The link
//! keeps every admitted packet that has not yet reached the far node in one
//! ring buffer, ordered by arrival, and asks the engine for a single wake-up:
//! the arrival of its head packet. Queue occupancy at any instant is recovered
//! from the recorded transmission starts with a cursor that only moves
//! forward, so admission decisions, statistics and conservation are exact.

use super::atm::{self, UbrPort, CELL_BYTES};
use super::packet::PacketId;
use super::queue::{Limit, Occupancy, QueueDisc};
use crate::time::{Dur, Time};
use std::collections::VecDeque;

#[derive(Copy, Clone, Debug, Default)]
struct InFlight {
    pkt: PacketId,
    bytes: u32,
    tx_start: Time,
    arrive: Time,
}

/// End-of-run summary of one link direction.
#[derive(Clone, Debug)]
pub struct LinkReport {
    pub arrivals: u64,
    pub drops: u64,
    pub drop_bytes: u64,
    pub loss_drops: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    /// Packets admitted but not fully transmitted at the end (waiting or in service).
    pub backlog_end: u64,
    /// Packets transmitted but still propagating at the end.
    pub propagating_end: u64,
    /// Fraction of the run the transmitter was busy.
    pub utilization: f64,
    /// Time-averaged number of packets waiting.
    pub queue_avg_pkts: f64,
    pub queue_max_pkts: u64,
    pub queue_max_bytes: u64,
}

/// What happened to a packet offered to a link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Dropped by the queue discipline; the caller frees the packet.
    Dropped,
    /// Admitted; the packet reaches the far node at `arrive`. `wake` is
    /// `Some(arrive)` when the link was empty, so that the caller (for an
    /// event-driven link) must schedule the link's head arrival.
    Admitted { wake: Option<Time>, arrive: Time, tx_start: Time },
}

/// A link's fields are laid out by cache line, in the order a packet's
/// arrival and admission read them. Line 0: the transmitter and the first
/// packet in flight (an arrival on a link carrying one packet reads nothing
/// else). Line 1: the serialization cache and the counters every admission
/// updates (an admission to an idle link reads lines 0 and 1 only). Line 2:
/// the second and third packets in flight while no more follow (a
/// sender's few back-to-back segments). Line 3: the other packets in
/// flight and the discipline (read when packets wait or many follow one
/// another). The rest is seldom read.
///
/// The packets in flight are `first` (when `len > 0`), then `near`, then
/// `rest`, in arrival order.
#[repr(C, align(64))]
pub struct Link {
    // Line 0.
    busy_until: Time,
    waiting_bytes: u64,
    pub delay: Dur,
    /// Number of packets in flight whose transmission has started (they come first).
    started: u32,
    /// Packets in flight.
    len: u32,
    first: InFlight,
    /// Whether packets are handed to the next link as soon as they are
    /// admitted here (see [`Link::set_advancing`]) instead of by an arrival event.
    advancing: bool,
    /// An ATM link: packets travel as AAL5 cells ([`atm::wire_bytes`]).
    atm: bool,
    /// Hand a packet on when its first cell arrives (it feeds a cell switch port).
    first_cell: bool,
    /// Loss rules, the packet log or a capture look at this link's packets.
    pub tapped: bool,
    /// The discipline decides on packets arriving at an idle transmitter
    /// too (RED); tail drop admits them without looking.
    disc_always: bool,
    // Line 1.
    /// Serialization times of the last two packet sizes seen (data and
    /// ACKs), most recent first, so the per-packet path does no 128-bit
    /// division. The most recent admission's is `ser_ns[0]`.
    ser_ns: [Dur; 2],
    ser_bytes: [u32; 2],
    /// Packets admitted (they will be or have been transmitted).
    accepted: u64,
    accepted_bytes: u64,
    /// Sum over admitted packets of transmission time, in ns (at most the
    /// end of the last transmission, so it fits).
    busy_ns: u64,
    /// Sum over admitted packets of their wait before transmission, in ns.
    wait_ns: u128,
    // Line 2.
    /// The packets in flight after `first`, up to two, while `rest` is
    /// empty: a sender's few back-to-back segments travel here, in the
    /// link's own line, instead of in a heap buffer of their own.
    near: [InFlight; 2],
    near_len: u32,
    /// Largest number of packets waiting (not counting the one in service).
    max_queue_pkts: u64,
    // Line 3.
    rest: VecDeque<InFlight>,
    disc: QueueDisc,
    max_queue_bytes: u64,
    // Seldom read.
    drops: u64,
    drop_bytes: u64,
    /// Drops by loss injection (included in `drops`).
    loss_drops: u64,
    pub rate_bps: u64,
    pub from: u32,
    pub to: u32,
    /// A UBR switch port instead of the packet queue.
    pub port: Option<Box<UbrPort>>,
}

impl Link {
    pub fn new(from: u32, to: u32, rate_bps: u64, delay: Dur, disc: QueueDisc) -> Link {
        Link {
            busy_until: Time::ZERO,
            waiting_bytes: 0,
            delay,
            started: 0,
            len: 0,
            first: InFlight::default(),
            advancing: false,
            atm: false,
            first_cell: false,
            tapped: false,
            disc_always: matches!(disc, QueueDisc::Red(_)),
            ser_ns: [Dur::ZERO; 2],
            ser_bytes: [0; 2],
            accepted: 0,
            accepted_bytes: 0,
            busy_ns: 0,
            wait_ns: 0,
            near: [InFlight::default(); 2],
            near_len: 0,
            rest: VecDeque::new(),
            disc,
            max_queue_pkts: 0,
            max_queue_bytes: 0,
            drops: 0,
            drop_bytes: 0,
            loss_drops: 0,
            from,
            to,
            rate_bps,
            port: None,
        }
    }

    /// The `i`-th packet in flight, in arrival order: `first`, then
    /// `near`, then `rest` (a packet goes to `near` only while `rest` is
    /// empty, so every packet in `near` came before every one in `rest`).
    #[inline]
    fn in_flight(&self, i: usize) -> Option<&InFlight> {
        let near = self.near_len as usize;
        if i >= self.len as usize {
            None
        } else if i == 0 {
            Some(&self.first)
        } else if i <= near {
            Some(&self.near[i - 1])
        } else {
            self.rest.get(i - 1 - near)
        }
    }

    #[inline]
    fn front(&self) -> Option<&InFlight> {
        self.in_flight(0)
    }

    #[inline]
    fn push_in_flight(&mut self, e: InFlight) {
        if self.len == 0 {
            self.first = e;
        } else if self.rest.is_empty() && (self.near_len as usize) < self.near.len() {
            self.near[self.near_len as usize] = e;
            self.near_len += 1;
        } else {
            self.rest.push_back(e);
        }
        self.len += 1;
    }

    #[inline]
    fn pop_in_flight(&mut self) -> Option<InFlight> {
        if self.len == 0 {
            return None;
        }
        let head = self.first;
        self.len -= 1;
        if self.len > 0 {
            self.first = if self.near_len > 0 {
                let e = self.near[0];
                self.near[0] = self.near[1];
                self.near_len -= 1;
                e
            } else {
                // A busy link's heap buffer holds thousands of packets in
                // flight, each written a queueing and propagation time ago:
                // by its pop, the line is out of cache. Ask for the one eight
                // packets on (three lines ahead).
                if let Some(e) = self.rest.get(8) {
                    crate::engine::prefetch(e);
                }
                self.rest.pop_front().expect("a packet after the first")
            };
        }
        Some(head)
    }

    /// When more packets follow the head one from the heap buffer, start
    /// loading the next (a hint: the link itself should be in cache by now).
    #[inline]
    pub fn prefetch_second(&self) {
        if self.len > 1 && self.near_len == 0 {
            if let Some(e) = self.rest.front() {
                crate::engine::prefetch(e);
            }
        }
    }

    fn iter_in_flight(&self) -> impl Iterator<Item = &InFlight> {
        self.front().into_iter().chain(self.near[..self.near_len as usize].iter()).chain(self.rest.iter())
    }

    /// Make this an ATM link; with `port`, its output is that UBR switch port.
    pub fn set_atm(&mut self, port: Option<UbrPort>) {
        self.atm = true;
        self.port = port.map(Box::new);
    }

    #[inline]
    pub fn is_atm(&self) -> bool {
        self.atm
    }

    /// Hand packets on at their first cell's arrival (this link feeds a port).
    pub fn set_first_cell(&mut self, on: bool) {
        self.first_cell = on;
    }

    /// The transmission time of one cell.
    pub fn cell_time(&self) -> Dur {
        Dur::serialization(u64::from(CELL_BYTES), self.rate_bps)
    }

    /// A frame the port sent whole: it leaves the port's buffer with its
    /// last cell at `last_departure` and reaches the far node a propagation
    /// delay later. Returns the wake-up to schedule if the link was empty.
    pub fn push_from_port(&mut self, pkt: PacketId, cells: u32, last_departure: Time) -> Option<Time> {
        let bytes = cells * CELL_BYTES;
        // Its cells were sent interleaved with others'; the report counts it
        // as sent back to back up to its last cell (the port itself counts
        // the link's busy time, cell by cell).
        let busy = Dur::from_ns(self.cell_time().as_ns() * u64::from(cells));
        let tx_start = Time::from_ns(last_departure.as_ns().saturating_sub(busy.as_ns()));
        let arrive = last_departure + self.delay;
        self.accepted += 1;
        self.accepted_bytes += u64::from(bytes);
        let was_empty = self.len == 0;
        self.push_in_flight(InFlight { pkt, bytes, tx_start, arrive });
        self.started = self.len;
        was_empty.then_some(arrive)
    }

    /// A frame the port lost (refused or cut); its queued cells still go
    /// out, and the port counts their time.
    pub fn count_port_loss(&mut self, cells: u32) {
        self.drops += 1;
        self.drop_bytes += u64::from(cells * CELL_BYTES);
    }

    /// Frames still arriving at the port (counted as backlog at the end).
    fn port_backlog(&self) -> u64 {
        self.port.as_ref().map_or(0, |p| p.in_progress())
    }

    #[inline]
    fn ser(&mut self, bytes: u32) -> Dur {
        if self.ser_bytes[0] == bytes {
            return self.ser_ns[0];
        }
        if self.ser_bytes[1] == bytes {
            self.ser_bytes.swap(0, 1);
            self.ser_ns.swap(0, 1);
            return self.ser_ns[0];
        }
        let d = Dur::serialization(u64::from(bytes), self.rate_bps);
        self.ser_bytes = [bytes, self.ser_bytes[0]];
        self.ser_ns = [d, self.ser_ns[0]];
        d
    }

    /// Make this link hand every admitted packet on at once, at its arrival
    /// time, instead of waking the engine when it arrives. Valid when every
    /// packet crossing this link continues onto a link whose only input is
    /// this one: that link then sees the same offers, in the same order and at
    /// the same simulated times, as with an arrival event, so results are
    /// unchanged and an event per packet is saved. Arrived packets are then
    /// removed lazily, on the next offer.
    pub fn set_advancing(&mut self, on: bool) {
        self.advancing = on;
    }

    pub fn is_advancing(&self) -> bool {
        self.advancing
    }

    /// Move the cursor past every packet whose transmission has started by `now`.
    #[inline]
    fn advance(&mut self, now: Time) {
        while let Some(e) = self.in_flight(self.started as usize) {
            if e.tx_start > now {
                break;
            }
            self.waiting_bytes -= u64::from(e.bytes);
            self.started += 1;
        }
    }

    /// Packets and bytes waiting for the transmitter at `now`.
    pub fn occupancy(&mut self, now: Time) -> Occupancy {
        self.advance(now);
        let packets = u64::from(self.len - self.started);
        Occupancy { packets, bytes: self.waiting_bytes, empty_since: self.last_tx_start(), busy: self.busy_until > now }
    }

    /// How many packets of `bytes` bytes, offered one after another now,
    /// the queue's hard limit admits: one straight into an idle
    /// transmitter, then as many as may wait. (RED may still drop some early.)
    pub fn room(&mut self, now: Time, bytes: u64) -> u64 {
        let occ = self.occupancy(now);
        let waiting = match self.disc.limit() {
            Limit::Packets(n) => n.saturating_sub(occ.packets),
            Limit::Bytes(b) => b.saturating_sub(occ.bytes) / bytes.max(1),
        };
        waiting + u64::from(!occ.busy)
    }

    /// A packet reaching the link was removed by loss injection.
    pub fn count_injected_drop(&mut self, bytes: u32) {
        self.drops += 1;
        self.drop_bytes += u64::from(bytes);
        self.loss_drops += 1;
    }

    /// Offer a packet of `bytes` wire bytes at `now`.
    #[inline(always)]
    pub fn offer(&mut self, now: Time, pkt: PacketId, bytes: u32) -> Offer {
        self.offer_as::<false>(now, pkt, bytes)
    }

    /// Offer a packet of `bytes` to an ATM link: it travels as cells.
    #[inline(never)]
    pub fn offer_cells(&mut self, now: Time, pkt: PacketId, bytes: u32) -> Offer {
        self.offer_as::<true>(now, pkt, bytes)
    }

    #[inline(always)]
    fn offer_as<const CELLS: bool>(&mut self, now: Time, pkt: PacketId, bytes: u32) -> Offer {
        let bytes = if CELLS { atm::wire_bytes(bytes) } else { bytes };
        if self.advancing {
            // Forget packets that have reached the far node (handed on already).
            while self.front().is_some_and(|e| e.arrive <= now) {
                self.pop_front_entry();
            }
        }
        let must_wait = self.busy_until > now;
        if !must_wait {
            // The transmitter is idle: every earlier packet has started.
            self.started = self.len;
            self.waiting_bytes = 0;
        } else {
            // Bring the cursor to `now`: packets whose transmission has
            // started leave the waiting count.
            self.advance(now);
        }
        if (must_wait || self.disc_always) && !self.admit(now, must_wait, bytes) {
            return Offer::Dropped;
        }
        let tx_start = if must_wait { self.busy_until } else { now };
        let ser = self.ser(bytes);
        let tx_end = tx_start + ser;
        let arrive = if CELLS && self.first_cell { tx_start + self.cell_time() } else { tx_end } + self.delay;
        self.busy_until = tx_end;
        self.accepted += 1;
        self.accepted_bytes += u64::from(bytes);
        self.busy_ns += ser.as_ns();
        self.wait_ns += u128::from((tx_start - now).as_ns());
        if must_wait {
            self.waiting_bytes += u64::from(bytes);
            let waiting = u64::from(self.len - self.started) + 1;
            self.max_queue_pkts = self.max_queue_pkts.max(waiting);
            self.max_queue_bytes = self.max_queue_bytes.max(self.waiting_bytes);
        }
        let was_empty = self.len == 0;
        self.push_in_flight(InFlight { pkt, bytes, tx_start, arrive });
        if !must_wait {
            // Started at once: it is in service, not waiting.
            debug_assert_eq!(self.started, self.len - 1);
            self.started += 1;
        }
        Offer::Admitted { wake: if was_empty { Some(arrive) } else { None }, arrive, tx_start }
    }

    /// The discipline's decision on a packet of `bytes` arriving now.
    #[inline]
    fn admit(&mut self, now: Time, busy: bool, bytes: u32) -> bool {
        let occ = Occupancy { packets: u64::from(self.len - self.started), bytes: self.waiting_bytes, empty_since: self.last_tx_start(), busy };
        if self.disc.admit(now, occ, u64::from(bytes)) {
            return true;
        }
        self.drops += 1;
        self.drop_bytes += u64::from(bytes);
        false
    }

    /// When the most recently admitted packet started transmission (the
    /// queue of waiting packets is empty from then until the next arrival
    /// waits): the end of the last transmission less its duration, the
    /// serialization cache's most recent entry.
    #[inline]
    fn last_tx_start(&self) -> Time {
        Time::from_ns(self.busy_until.as_ns() - self.ser_ns[0].as_ns())
    }

    /// Called at the head packet's arrival time: remove it and return it with
    /// the next wake-up, if any packet remains.
    #[inline]
    pub fn pop_arrival(&mut self, now: Time) -> (PacketId, Option<(Time, PacketId)>) {
        let head = self.pop_front_entry();
        debug_assert_eq!(head.arrive, now);
        (head.pkt, self.front().map(|e| (e.arrive, e.pkt)))
    }

    #[inline]
    fn pop_front_entry(&mut self) -> InFlight {
        let head = self.pop_in_flight().expect("link woken with nothing in flight");
        if self.started > 0 {
            self.started -= 1;
        } else {
            self.waiting_bytes -= u64::from(head.bytes);
        }
        head
    }

    /// The summary of the run, ending at `end`.
    pub fn report(&self, end: Time) -> LinkReport {
        let mut backlog = 0u64;
        let mut propagating = 0u64;
        let mut backlog_bytes = 0u64;
        // A switch port counts its busy time itself, cell by cell (its
        // frames in flight were sent interleaved, not back to back).
        let mut busy = self.port.as_ref().map_or(u128::from(self.busy_ns), |p| p.busy_ns(end));
        let mut wait = self.wait_ns;
        for e in self.iter_in_flight() {
            let ser = Dur::serialization(u64::from(e.bytes), self.rate_bps);
            let tx_end = e.tx_start + ser;
            if tx_end > end {
                backlog += 1;
                backlog_bytes += u64::from(e.bytes);
                // Count only the part of the transmission inside the run.
                if self.port.is_none() {
                    let inside = end.saturating_since(e.tx_start);
                    busy -= u128::from((ser - inside).as_ns());
                }
                // Count only the part of the wait inside the run.
                wait = wait.saturating_sub(u128::from(e.tx_start.saturating_since(end).as_ns()));
            } else if e.arrive > end {
                propagating += 1;
            }
        }
        let span = end.as_ns() as f64;
        let mut queue_avg = if span > 0.0 { wait as f64 / span } else { 0.0 };
        let (mut queue_max, mut queue_max_bytes) = (self.max_queue_pkts, self.max_queue_bytes);
        if let Some(port) = &self.port {
            // A switch port queues cells: its queue is counted in cells.
            let (avg, max) = port.queue_cells(end);
            queue_avg = avg;
            queue_max = u64::from(max);
            queue_max_bytes = u64::from(max) * u64::from(CELL_BYTES);
        }
        LinkReport {
            // Every packet (or a port's frame) offered was admitted, dropped, or is still arriving at the port.
            arrivals: self.accepted + self.drops + self.port_backlog(),
            drops: self.drops,
            drop_bytes: self.drop_bytes,
            loss_drops: self.loss_drops,
            departures: self.accepted - backlog,
            departure_bytes: self.accepted_bytes - backlog_bytes,
            backlog_end: backlog + self.port_backlog(),
            propagating_end: propagating,
            utilization: if span > 0.0 { busy as f64 / span } else { 0.0 },
            queue_avg_pkts: queue_avg,
            queue_max_pkts: queue_max,
            queue_max_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::queue::DropTail;
    use super::*;

    fn link(limit: u64) -> Link {
        // 1500 bytes take 8 ms at 1.5 Mb/s; 50 ms propagation.
        Link::new(0, 1, 1_500_000, Dur::from_ms(50), QueueDisc::DropTail(DropTail { limit: Limit::Packets(limit) }))
    }

    #[test]
    fn a_burst_is_serialized_and_tail_dropped() {
        let mut l = link(2);
        let t0 = Time::ZERO;
        // First packet goes straight into service, two wait, the fourth is dropped.
        assert_eq!(l.offer(t0, 0, 1500), Offer::Admitted { wake: Some(Time::from_ns(58_000_000)), arrive: Time::from_ns(58_000_000), tx_start: t0 });
        assert_eq!(l.offer(t0, 1, 1500), Offer::Admitted { wake: None, arrive: Time::from_ns(66_000_000), tx_start: Time::from_ns(8_000_000) });
        assert_eq!(l.offer(t0, 2, 1500), Offer::Admitted { wake: None, arrive: Time::from_ns(74_000_000), tx_start: Time::from_ns(16_000_000) });
        assert_eq!(l.offer(t0, 3, 1500), Offer::Dropped);
        assert_eq!(l.occupancy(t0).packets, 2);
        // At 8 ms the second packet starts, so one is waiting.
        assert_eq!(l.occupancy(Time::from_ns(8_000_000)).packets, 1);
        let (p, next) = l.pop_arrival(Time::from_ns(58_000_000));
        assert_eq!((p, next), (0, Some((Time::from_ns(66_000_000), 1))));
        let r = l.report(Time::from_ns(100_000_000));
        assert_eq!((r.arrivals, r.drops, r.departures, r.backlog_end), (4, 1, 3, 0));
        // Busy 24 ms of 100 ms; waits 8 + 16 ms over 100 ms.
        assert!((r.utilization - 0.24).abs() < 1e-12);
        assert!((r.queue_avg_pkts - 0.24).abs() < 1e-12);
        assert_eq!(r.queue_max_pkts, 2);
    }

    proptest::proptest! {
        /// A link's packets in flight (the first inline, the others beside)
        /// behave as one FIFO queue.
        #[test]
        fn packets_in_flight_are_a_queue(ops in proptest::collection::vec(proptest::option::of(0u32..1000), 0..200)) {
            let mut l = link(1);
            let mut reference = VecDeque::new();
            for op in ops {
                match op {
                    Some(pkt) => {
                        let e = InFlight { pkt, bytes: pkt + 1, tx_start: Time::from_ns(u64::from(pkt)), arrive: Time::from_ns(2 * u64::from(pkt)) };
                        l.push_in_flight(e);
                        reference.push_back(e);
                    }
                    None => proptest::prop_assert_eq!(l.pop_in_flight().map(|e| e.pkt), reference.pop_front().map(|e| e.pkt)),
                }
                proptest::prop_assert_eq!(l.len as usize, reference.len());
                for i in 0..=reference.len() {
                    proptest::prop_assert_eq!(l.in_flight(i).map(|e| e.pkt), reference.get(i).map(|e| e.pkt));
                }
                proptest::prop_assert!(l.iter_in_flight().map(|e| e.pkt).eq(reference.iter().map(|e| e.pkt)));
            }
        }
    }

    #[test]
    fn an_arrival_and_an_admission_to_an_idle_link_read_two_cache_lines() {
        let l = link(1);
        let base = &l as *const Link as usize;
        let line = |p: usize| (p - base) / 64;
        assert_eq!(base % 64, 0);
        // Arrival of the only packet in flight: line 0.
        for p in [&l.busy_until as *const _ as usize, &l.waiting_bytes as *const _ as usize, &l.delay as *const _ as usize,
                  &l.started as *const _ as usize, &l.len as *const _ as usize, &l.first as *const _ as usize,
                  &l.first.arrive as *const _ as usize, &l.tapped as *const _ as usize, &l.disc_always as *const _ as usize] {
            assert_eq!(line(p), 0);
        }
        // Admission: line 1 too.
        for p in [&l.ser_ns as *const _ as usize, &l.ser_bytes as *const _ as usize, &l.accepted as *const _ as usize,
                  &l.busy_ns as *const _ as usize, &l.wait_ns as *const _ as usize] {
            assert_eq!(line(p), 1);
        }
        // The second and third packets in flight: line 2.
        assert_eq!(line(&l.near as *const _ as usize), 2);
        assert_eq!(line(&l.near_len as *const _ as usize), 2);
        assert_eq!(line(&l.rest as *const _ as usize), 3);
        assert_eq!(line(&l.disc as *const _ as usize), 3);
    }

    #[test]
    fn a_ports_busy_time_is_its_cells_within_the_run() {
        // A 10-cell frame queued at once on a 1.5 Mb/s port: its cells go
        // out back to back from 0, the last at 10 cell times. The report at
        // half its transmission counts half (the port's own count; the
        // frame in flight is not clipped a second time).
        let mut l = link(10);
        let cell = l.cell_time();
        l.set_atm(Some(UbrPort::new(atm::UbrConfig { buffer_cells: 100, ..Default::default() }, cell)));
        let port = l.port.as_mut().expect("a port");
        let last = port.frame_arrives(Time::ZERO, 7, 0, 10, Dur::ZERO);
        port.advance(last);
        let out: Vec<_> = port.take_out().collect();
        assert_eq!(out, vec![atm::FrameOut::Sent(7, Time::ZERO + Dur::from_ns(10 * cell.as_ns()))]);
        l.push_from_port(7, 10, Time::ZERO + Dur::from_ns(10 * cell.as_ns()));
        let r = l.report(Time::ZERO + Dur::from_ns(5 * cell.as_ns()));
        assert_eq!((r.backlog_end, r.departures), (1, 0));
        assert!((r.utilization - 1.0).abs() < 1e-12, "{}", r.utilization);
        let r = l.report(Time::ZERO + Dur::from_ns(20 * cell.as_ns()));
        assert!((r.utilization - 0.5).abs() < 1e-12, "{}", r.utilization);
    }

    #[test]
    fn report_clips_at_the_end_of_the_run() {
        let mut l = link(10);
        l.offer(Time::ZERO, 0, 1500);
        l.offer(Time::ZERO, 1, 1500);
        // End at 12 ms: first transmitted (propagating), second half sent.
        let r = l.report(Time::from_ns(12_000_000));
        assert_eq!((r.departures, r.backlog_end, r.propagating_end), (1, 1, 1));
        assert!((r.utilization - 1.0).abs() < 1e-12);
        // One packet waited 8 ms of the 12.
        assert!((r.queue_avg_pkts - 8.0 / 12.0).abs() < 1e-12);
    }
}
