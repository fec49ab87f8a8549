//! ATM: AAL5 framing into cells, and a UBR switch output port whose buffer
//! is accounted in cells, with Early Packet Discard, Selective Drop and
//! Partial Packet Discard.
//!
//! **Framing.** A packet of L bytes (TCP/IP headers included) is carried in
//! RFC 1483 LLC/SNAP encapsulation (8 bytes) in an AAL5 CPCS-PDU with an
//! 8-byte trailer, padded to whole 48-byte cell payloads: [`cells`]`(L) =
//! ceil((L + 8 + 8) / 48)` cells of 53 bytes. A link's rate is spent on cells.
//!
//! **The port.** Frames (one per packet) reach the port from their access
//! links, one cell every `gap` (the access link's cell time), starting at
//! the first cell's arrival. Cells of different frames, and so of different
//! VCs (one VC per TCP connection), interleave in arrival order. The output
//! sends one cell every `cell_time`, first in, first out; the buffer holds
//! at most K cells, the one being sent included.
//!
//! The port keeps no per-cell events: it is advanced to a time on demand
//! ([`UbrPort::advance`]) and replays every cell arrival up to it in time
//! order from the frames in progress (a heap of them), so its decisions are
//! exactly those of cell-by-cell arrivals. A FIFO cell's departure is
//! `max(arrival, previous departure) + cell_time`, so the occupancy at any
//! time is the number of queued cells whose departure is later.
//!
//! **Drop policies** (Floyd and Romanow 1995; Goyal et al. for SD), decided
//! at a frame's first cell, with occupancy X, threshold R = `r` K:
//! - `Ubr`: no early drop;
//! - `Epd`: refuse the whole frame if X > R;
//! - `Sd`: refuse it if X > R and X_i > Z X / N_a, X_i the VC's cells in the
//!   buffer and N_a the number of VCs with cells in the buffer.
//!
//! Under every policy a cell that finds the buffer full is dropped, and so is
//! the rest of its frame (PPD). Cells of that frame already queued still go
//! out, wasting the link; the frame is lost at reassembly.

use super::packet::PacketId;
use crate::time::{Dur, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Cell size and payload, bytes.
pub const CELL_BYTES: u32 = 53;
pub const CELL_PAYLOAD: u32 = 48;
/// LLC/SNAP encapsulation (RFC 1483) and the AAL5 trailer, bytes.
pub const LLC_SNAP: u32 = 8;
pub const AAL5_TRAILER: u32 = 8;

/// Cells carrying a packet of `bytes` (TCP/IP headers included).
#[inline]
pub fn cells(bytes: u32) -> u32 {
    (bytes + LLC_SNAP + AAL5_TRAILER).div_ceil(CELL_PAYLOAD)
}

/// Bytes on an ATM link for a packet of `bytes`: its cells, 53 bytes each.
#[inline]
pub fn wire_bytes(bytes: u32) -> u32 {
    cells(bytes) * CELL_BYTES
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Plain UBR: tail cell drop (with PPD) only.
    Ubr,
    /// Early Packet Discard.
    Epd,
    /// Selective Drop (per-VC accounting).
    Sd,
}

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "ubr" => Policy::Ubr,
            "epd" => Policy::Epd,
            "sd" => Policy::Sd,
            _ => return None,
        })
    }
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Ubr => "ubr",
            Policy::Epd => "epd",
            Policy::Sd => "sd",
        }
    }
}

#[derive(Clone, Debug)]
pub struct UbrConfig {
    /// Buffer size K, cells.
    pub buffer_cells: u32,
    /// R as a fraction of K.
    pub r: f64,
    /// SD's fairness threshold Z.
    pub z: f64,
    pub policy: Policy,
}

impl Default for UbrConfig {
    /// R = 0.8 K and Z = 0.8, as Goyal et al. (ATM Forum 98-0876R1) used.
    fn default() -> Self {
        UbrConfig { buffer_cells: 1000, r: 0.8, z: 0.8, policy: Policy::Epd }
    }
}

/// What happened to the cells and frames at a port.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UbrCounters {
    pub frames: u64,
    pub cells_in: u64,
    /// Frames refused whole at their first cell by EPD's or SD's threshold.
    pub early_drops: u64,
    /// Frames cut by a full buffer (PPD).
    pub ppd_frames: u64,
    /// Cells never queued: refused frames, and PPD's cut tails.
    pub dropped_cells: u64,
    /// Cells queued and sent for frames lost at reassembly.
    pub wasted_cells: u64,
    /// Frames that left whole.
    pub frames_out: u64,
}

#[derive(Clone, Debug)]
struct Frame {
    pkt: PacketId,
    vc: u32,
    /// Cells still to arrive.
    left: u32,
    gap: Dur,
    /// No further cell is queued (refused, or cut by PPD).
    dropping: bool,
    /// Cells of this frame queued so far.
    queued: u32,
}

/// What became of a frame, once its last cell arrived.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameOut {
    /// Whole: its last cell leaves the port at this time.
    Sent(PacketId, Time),
    /// Lost (refused, or a cell dropped), with the cells of it that were queued (wasted).
    Lost(PacketId, u32),
}

pub struct UbrPort {
    cfg: UbrConfig,
    /// Threshold R, cells.
    r_cells: f64,
    cell_time: Dur,
    /// Queued cells, in order: (departure time, VC).
    fifo: VecDeque<(Time, u32)>,
    /// Cells in the buffer per VC, and VCs with any.
    per_vc: Vec<u32>,
    active_vcs: u32,
    /// Departure of the last queued cell.
    last_departure: Time,
    /// Frames whose cells are arriving: (next cell's arrival, arrival order, slot).
    arriving: BinaryHeap<Reverse<(Time, u64, u32)>>,
    frames: Vec<Frame>,
    free: Vec<u32>,
    order: u64,
    out: Vec<FrameOut>,
    now: Time,
    pub counters: UbrCounters,
    /// The most cells each VC had in the buffer.
    pub vc_max: Vec<u32>,
    /// Sum over queued cells of their wait before transmission, ns.
    wait_ns: u128,
    /// The most cells waiting at once (the one in transmission not counted).
    max_waiting: u32,
    /// Cells ever queued: each keeps the output busy for a cell time.
    queued_cells: u64,
    /// Replay a frame's cells without the heap where that changes nothing
    /// ([`UbrPort::advance`]); tests turn it off to compare.
    batched: bool,
}

impl UbrPort {
    /// A port whose output sends a cell every `cell_time`.
    pub fn new(cfg: UbrConfig, cell_time: Dur) -> UbrPort {
        let r_cells = cfg.r * f64::from(cfg.buffer_cells);
        UbrPort {
            cfg,
            r_cells,
            cell_time,
            fifo: VecDeque::new(),
            per_vc: Vec::new(),
            active_vcs: 0,
            last_departure: Time::ZERO,
            arriving: BinaryHeap::new(),
            frames: Vec::new(),
            free: Vec::new(),
            order: 0,
            out: Vec::new(),
            now: Time::ZERO,
            counters: UbrCounters::default(),
            vc_max: Vec::new(),
            wait_ns: 0,
            max_waiting: 0,
            queued_cells: 0,
            batched: true,
        }
    }

    /// Cells in the buffer at `now` (after [`UbrPort::advance`] to `now`).
    pub fn occupancy(&self) -> u32 {
        self.fifo.len() as u32
    }

    /// Cells of `vc` in the buffer (after [`UbrPort::advance`]).
    pub fn vc_occupancy(&self, vc: u32) -> u32 {
        self.per_vc.get(vc as usize).copied().unwrap_or(0)
    }

    /// VCs with cells in the buffer (after [`UbrPort::advance`]).
    pub fn active_vcs(&self) -> u32 {
        self.active_vcs
    }

    /// Let every queued cell whose departure is at or before `t` leave.
    fn depart(&mut self, t: Time) {
        while let Some(&(d, vc)) = self.fifo.front() {
            if d > t {
                break;
            }
            self.fifo.pop_front();
            let n = &mut self.per_vc[vc as usize];
            *n -= 1;
            if *n == 0 {
                self.active_vcs -= 1;
            }
        }
    }

    /// One cell of frame `slot` arrives at `t`: returns when the frame's
    /// next cell arrives (`None` after its last), for the caller to
    /// replay or to schedule ([`UbrPort::schedule`]).
    fn cell(&mut self, t: Time, slot: u32) -> Option<Time> {
        self.depart(t);
        self.counters.cells_in += 1;
        let f = &mut self.frames[slot as usize];
        f.left -= 1;
        if f.dropping {
            self.counters.dropped_cells += 1;
        } else if self.fifo.len() as u32 >= self.cfg.buffer_cells {
            // PPD: the buffer is full; this cell and the rest of the frame go.
            f.dropping = true;
            self.counters.ppd_frames += 1;
            self.counters.dropped_cells += 1;
        } else {
            let start = t.max(self.last_departure);
            let d = start + self.cell_time;
            self.last_departure = d;
            self.wait_ns += u128::from(start.saturating_since(t).as_ns());
            self.fifo.push_back((d, f.vc));
            self.queued_cells += 1;
            // Every queued cell but the one in transmission waits.
            self.max_waiting = self.max_waiting.max(self.fifo.len() as u32 - 1);
            f.queued += 1;
            let vc = f.vc as usize;
            if self.per_vc[vc] == 0 {
                self.active_vcs += 1;
            }
            self.per_vc[vc] += 1;
            self.vc_max[vc] = self.vc_max[vc].max(self.per_vc[vc]);
        }
        let f = &self.frames[slot as usize];
        if f.left > 0 {
            return Some(t + f.gap);
        }
        // The last cell: the frame is whole or lost.
        if f.dropping {
            self.counters.wasted_cells += u64::from(f.queued);
            self.out.push(FrameOut::Lost(f.pkt, f.queued));
        } else {
            self.counters.frames_out += 1;
            self.out.push(FrameOut::Sent(f.pkt, self.last_departure));
        }
        self.free.push(slot);
        None
    }

    /// Frame `slot`'s next cell arrives at `t`.
    fn schedule(&mut self, t: Time, slot: u32) {
        self.order += 1;
        self.arriving.push(Reverse((t, self.order, slot)));
    }

    /// Replay every cell arrival at or before `now`, in time order (ties in
    /// the order the frames' cells were scheduled).
    ///
    /// A frame's cells are replayed one after another without going back
    /// to the heap while each comes strictly before every other frame's
    /// next cell: the heap would hand them out in that order, and at a tie
    /// the other frame, scheduled earlier, goes first. Skipping the heap
    /// skips their arrival-order numbers too, which changes no comparison:
    /// every number handed out later is still larger than those queued.
    pub fn advance(&mut self, now: Time) {
        self.now = self.now.max(now);
        let batched = self.batched;
        while let Some(&Reverse((t, _, slot))) = self.arriving.peek() {
            if t > now {
                break;
            }
            self.arriving.pop();
            let mut t = t;
            while let Some(next) = self.cell(t, slot) {
                let before_others = self.arriving.peek().is_none_or(|&Reverse((other, _, _))| next < other);
                if next > now || !before_others || !batched {
                    self.schedule(next, slot);
                    break;
                }
                t = next;
            }
        }
        self.depart(now);
    }

    /// A frame of `n` cells of `vc` begins to arrive now, a cell every
    /// `gap`. Returns when its last cell arrives: advance the port then to
    /// learn its fate ([`UbrPort::take_out`]).
    pub fn frame_arrives(&mut self, now: Time, pkt: PacketId, vc: u32, n: u32, gap: Dur) -> Time {
        debug_assert!(n > 0);
        self.advance(now);
        if self.per_vc.len() <= vc as usize {
            self.per_vc.resize(vc as usize + 1, 0);
            self.vc_max.resize(vc as usize + 1, 0);
        }
        self.counters.frames += 1;
        let x = f64::from(self.occupancy());
        let refuse = x > self.r_cells
            && match self.cfg.policy {
                Policy::Ubr => false,
                Policy::Epd => true,
                // X_i > Z X / N_a; with no VC in the buffer X is 0, below R.
                Policy::Sd => f64::from(self.vc_occupancy(vc)) > self.cfg.z * x / f64::from(self.active_vcs.max(1)),
            };
        if refuse {
            self.counters.early_drops += 1;
        }
        let frame = Frame { pkt, vc, left: n, gap, dropping: refuse, queued: 0 };
        let slot = match self.free.pop() {
            Some(s) => {
                self.frames[s as usize] = frame;
                s
            }
            None => {
                self.frames.push(frame);
                self.frames.len() as u32 - 1
            }
        };
        if let Some(next) = self.cell(now, slot) {
            self.schedule(next, slot);
        }
        now + Dur::from_ns(gap.as_ns() * u64::from(n - 1))
    }

    pub fn config(&self) -> &UbrConfig {
        &self.cfg
    }

    /// The time the port was last advanced to.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The queue of cells over a run ending at `end`: the time average of
    /// cells waiting (not counting the one in transmission), and the most
    /// that waited at once. Waits after `end` are not counted.
    pub fn queue_cells(&self, end: Time) -> (f64, u32) {
        let mut wait = self.wait_ns;
        for &(d, _) in &self.fifo {
            let start = Time::from_ns(d.as_ns() - self.cell_time.as_ns());
            wait = wait.saturating_sub(u128::from(start.saturating_since(end).as_ns()));
        }
        let span = end.as_ns() as f64;
        (if span > 0.0 { wait as f64 / span } else { 0.0 }, self.max_waiting)
    }

    /// The time the output spent sending cells in a run ending at `end`:
    /// a cell time for every queued cell, whole frames' and wasted ones'
    /// alike, less what the cells still queued send after `end`.
    pub fn busy_ns(&self, end: Time) -> u128 {
        let tau = self.cell_time.as_ns();
        let after: u128 = self.fifo.iter().map(|&(d, _)| u128::from(d.saturating_since(end).as_ns().min(tau))).sum();
        u128::from(self.queued_cells) * u128::from(tau) - after
    }

    /// Frames whose cells are still arriving.
    pub fn in_progress(&self) -> u64 {
        (self.frames.len() - self.free.len()) as u64
    }

    /// Frames whose last cell has arrived, in that order.
    pub fn take_out(&mut self) -> std::vec::Drain<'_, FrameOut> {
        self.out.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAU: u64 = 10_000; // output cell time, ns
    const GAP: u64 = 3_000; // access cell time, ns (faster than the output)

    fn port(k: u32, policy: Policy) -> UbrPort {
        UbrPort::new(UbrConfig { buffer_cells: k, policy, ..Default::default() }, Dur::from_ns(TAU))
    }

    fn t(ns: u64) -> Time {
        Time::from_ns(ns)
    }

    #[test]
    fn cells_per_frame_and_the_cell_tax() {
        // 1024-byte segments: 1064-byte IP packets, 23 cells; 9180: 9220, 193 cells.
        assert_eq!(cells(1064), 23);
        assert_eq!(cells(9220), 193);
        // A 40-byte ACK: 56 bytes in two cells; 32 bytes of IP fit one.
        assert_eq!((cells(40), cells(32), cells(33)), (2, 1, 2));
        assert_eq!(wire_bytes(1064), 23 * 53);
        // The most TCP goodput a 45 Mb/s T3 carries: 45 x 1024 / 1219 = 37.80
        // and 45 x 9180 / 10229 = 40.39 Mb/s.
        let goodput = |mss: u32| (45e6 * f64::from(mss) / f64::from(wire_bytes(mss + 40)) / 1e4).round() / 100.0;
        assert_eq!((goodput(1024), goodput(9180)), (37.80, 40.39));
    }

    #[test]
    fn a_frame_alone_leaves_whole_in_order() {
        let mut p = port(100, Policy::Epd);
        let last = p.frame_arrives(t(0), 7, 0, 5, Dur::from_ns(GAP));
        assert_eq!(last, t(4 * GAP));
        p.advance(last);
        // Cells arrive faster than they leave: the last leaves 5 cell times after the first arrived.
        assert_eq!(p.take_out().collect::<Vec<_>>(), vec![FrameOut::Sent(7, t(5 * TAU))]);
        assert_eq!(p.occupancy(), 5 - (4 * GAP / TAU) as u32);
        p.advance(t(5 * TAU));
        assert_eq!((p.occupancy(), p.active_vcs()), (0, 0));
    }

    /// Fill the buffer with `x` cells of VC 0 at time 0 (a frame arriving
    /// all at once), then advance to time 0.
    fn fill(p: &mut UbrPort, vc: u32, x: u32) {
        p.frame_arrives(t(0), 100 + vc, vc, x, Dur::ZERO);
        p.advance(t(0));
    }

    #[test]
    fn epd_refuses_a_frame_exactly_when_the_occupancy_is_above_r() {
        // K = 100, R = 80. At X = 80 a frame is admitted; at X = 81 refused.
        for (x, refused) in [(80, false), (81, true)] {
            let mut p = port(100, Policy::Epd);
            fill(&mut p, 0, x);
            p.take_out().for_each(drop);
            assert_eq!(p.occupancy(), x);
            let last = p.frame_arrives(t(0), 1, 1, 3, Dur::ZERO);
            p.advance(last);
            let out: Vec<_> = p.take_out().collect();
            assert_eq!(out, vec![if refused { FrameOut::Lost(1, 0) } else { FrameOut::Sent(1, t(u64::from(x + 3) * TAU)) }]);
            assert_eq!(p.counters.early_drops, u64::from(refused));
            assert_eq!(p.counters.dropped_cells, if refused { 3 } else { 0 });
            assert_eq!(p.counters.wasted_cells, 0);
        }
        // Plain UBR admits it.
        let mut p = port(100, Policy::Ubr);
        fill(&mut p, 0, 81);
        let last = p.frame_arrives(t(0), 1, 1, 3, Dur::ZERO);
        p.advance(last);
        assert!(p.take_out().any(|o| o == FrameOut::Sent(1, t(84 * TAU))));
    }

    #[test]
    fn selective_drop_checks_the_vcs_share() {
        // K = 100, R = 80: 60 cells of VC 0, 25 of VC 1 (X = 85 > R, N_a = 2,
        // Z X / N_a = 0.8 * 85 / 2 = 34). VC 0 (60 > 34) is refused; VC 1 (25)
        // and a new VC 2 (0) are admitted.
        let setup = || {
            let mut p = port(100, Policy::Sd);
            fill(&mut p, 0, 60);
            fill(&mut p, 1, 25);
            p.take_out().for_each(drop);
            assert_eq!((p.occupancy(), p.active_vcs(), p.vc_occupancy(0), p.vc_occupancy(1)), (85, 2, 60, 25));
            p
        };
        for (vc, refused) in [(0, true), (1, false), (2, false)] {
            let mut p = setup();
            let last = p.frame_arrives(t(0), 9, vc, 2, Dur::ZERO);
            p.advance(last);
            let out: Vec<_> = p.take_out().collect();
            assert_eq!(matches!(out[0], FrameOut::Lost(9, 0)), refused, "VC {vc}");
        }
        // Below R nothing is refused, whatever the share.
        let mut p = port(100, Policy::Sd);
        fill(&mut p, 0, 80);
        p.take_out().for_each(drop);
        let last = p.frame_arrives(t(0), 9, 0, 2, Dur::ZERO);
        p.advance(last);
        assert!(matches!(p.take_out().next(), Some(FrameOut::Sent(9, _))));
    }

    #[test]
    fn ppd_drops_the_tail_after_a_full_buffer_and_counts_the_waste() {
        // K = 10 with 7 cells queued at time 0 (X = 7 <= R = 8: EPD admits).
        // A 6-cell frame's cells arrive at 0, 3, 6, 9, 12 and 15 us; the
        // output's first departure is at 10 us. Cells 1-3 fill the buffer to
        // 10; cell 4 (9 us) finds it full: it and cells 5-6 are dropped,
        // though room opens at 10 us, and cells 1-3 are wasted.
        let mut p = port(10, Policy::Epd);
        fill(&mut p, 0, 7);
        p.take_out().for_each(drop);
        let last = p.frame_arrives(t(0), 5, 1, 6, Dur::from_ns(GAP));
        p.advance(last);
        assert_eq!(p.take_out().collect::<Vec<_>>(), vec![FrameOut::Lost(5, 3)]);
        let c = &p.counters;
        assert_eq!((c.ppd_frames, c.dropped_cells, c.wasted_cells, c.early_drops), (1, 3, 3, 0));
        // The wasted cells still occupy the output: 10 cells, the last leaving at 10 TAU.
        assert_eq!(p.occupancy(), 10 - (last.as_ns() / TAU) as u32);
        // Its busy time counts them when they are sent, within the run:
        // 4.5 of the 10 cell times by 4.5 TAU, all 10 by 10 TAU and later.
        assert_eq!(p.busy_ns(t(45 * TAU / 10)), u128::from(45 * TAU / 10));
        p.advance(t(10 * TAU));
        assert_eq!(p.occupancy(), 0);
        assert_eq!((p.busy_ns(t(10 * TAU)), p.busy_ns(t(30 * TAU))), (u128::from(10 * TAU), u128::from(10 * TAU)));
    }

    #[test]
    fn the_queue_of_cells_is_averaged_over_the_run() {
        // Five cells arrive every 3 us and leave every 10 us: they wait 0,
        // 7, 14, 21 and 28 us (70 us in all); at the fifth's arrival the
        // first has left, one is in transmission and three wait.
        let mut p = port(100, Policy::Epd);
        let last = p.frame_arrives(t(0), 7, 0, 5, Dur::from_ns(GAP));
        p.advance(last);
        assert_eq!(p.queue_cells(t(1_000_000)), (0.07, 3));
        // A run that ends at 25 us counts the waits up to then: 7 + 14 +
        // (25 - 9) + (25 - 12) = 50 us, two cells on average.
        assert_eq!(p.queue_cells(t(25_000)), (2.0, 3));
    }

    /// Everything a port reports, after each step of a run.
    fn replay(batched: bool, k: u32, policy: Policy, steps: &[(u64, u32, u32, u64)]) -> Vec<String> {
        let mut p = port(k, policy);
        p.batched = batched;
        let mut now = 0;
        let mut seen = Vec::new();
        for (i, &(after, vc, n, gap)) in steps.iter().enumerate() {
            now += after;
            if n == 0 {
                p.advance(t(now));
            } else {
                p.frame_arrives(t(now), i as u32, vc, n, Dur::from_ns(gap));
            }
            let out: Vec<_> = p.take_out().collect();
            seen.push(format!("{out:?} {} {} {:?}", p.occupancy(), p.active_vcs(), p.per_vc));
        }
        p.advance(t(now + 1_000_000_000));
        let end = t(now + 1);
        seen.push(format!("{:?} {:?} {:?} {:?} {}", p.take_out().collect::<Vec<_>>(), p.counters, p.vc_max, p.queue_cells(end), p.busy_ns(end)));
        seen
    }

    proptest::proptest! {
        #[test]
        fn a_frames_cells_replayed_in_a_run_give_what_the_heap_gives_one_by_one(
            k in 5u32..60,
            policy in proptest::sample::select(vec![Policy::Ubr, Policy::Epd, Policy::Sd]),
            // (time since the last step, VC, cells (0: only advance), gap):
            // times on a grid of 1 us, so that cells of two frames often
            // arrive at the same time.
            steps in proptest::collection::vec((proptest::strategy::Strategy::prop_map(0u64..40, |us| us * 1_000), 0u32..4, 0u32..25, proptest::sample::select(vec![0, GAP, 2 * GAP, TAU, 5_000])), 1..40),
        ) {
            proptest::prop_assert_eq!(replay(true, k, policy, &steps), replay(false, k, policy, &steps));
        }
    }

    #[test]
    fn cells_of_two_vcs_interleave_in_arrival_order() {
        // Two 3-cell frames, the second starting half a gap later: cells
        // alternate in the FIFO, so the first frame's last cell leaves fifth.
        let mut p = port(100, Policy::Ubr);
        let a = p.frame_arrives(t(0), 1, 0, 3, Dur::from_ns(GAP));
        let b = p.frame_arrives(t(GAP / 2), 2, 1, 3, Dur::from_ns(GAP));
        p.advance(a.max(b));
        let out: Vec<_> = p.take_out().collect();
        assert_eq!(out, vec![FrameOut::Sent(1, t(5 * TAU)), FrameOut::Sent(2, t(6 * TAU))]);
        assert_eq!(p.vc_max, vec![3, 3]);
    }
}
