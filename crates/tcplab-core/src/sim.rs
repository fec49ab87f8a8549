//! The simulator: wiring only. It builds the parts from a [`Scenario`]
//! ([`crate::build`]), runs the event loop, and hands each event to the part
//! that owns it:
//!
//! - a link's head arrival to the network, which forwards the packet or
//!   delivers it at the end of its route to its connection;
//! - a connection timer to the connection;
//! - an application's wake-up, and every event a connection reports, to the
//!   application;
//! - a sampling tick to the tracer.
//!
//! Connections reach the network and the clock through [`Io`] (their
//! [`Wire`]); applications reach connections through [`AppIo`] (their
//! [`Transport`]).

use crate::app::{Apps, Transport};
use crate::build::{build, Parts};
use crate::engine::{prefetch, prefetch_bytes, prefetch_whole, EventQueue};
use crate::error::Result;
use crate::net::{Network, Packet, PacketKind, RouteHead, NO_PACKET, PORT_WAKE};
use crate::scenario::Scenario;
use crate::stats::trace::MAX_SAMPLES;
use crate::stats::columns::Columns;
use crate::stats::retired::{Names, Retired};
use crate::stats::{results, Results, Tracer};
use crate::tcp::{Connection, Endpoints, Segment, Timer, Wire};
use crate::time::Time;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Copy, Clone, Debug)]
enum Ev {
    /// The head packet of a link reaches the far node (`pkt`: that packet,
    /// as a hint for the prefetch).
    Link { link: u32, pkt: u32 },
    /// A connection's timer, valid if `gen` is current.
    Conn { conn: u32, timer: Timer, gen: u32 },
    /// An application wakes.
    App(u32),
    /// Periodic sampling of traced connections.
    Sample,
    /// The applications the run waits for have finished: stop here.
    Stop,
}

/// Above this much per-flow state ([`Simulator::flow_state_bytes`]) the
/// loop prefetches in stages ([`Simulator::prefetch_deep`]): a quarter of a
/// 32 MiB last-level cache. Below it the state mostly stays in cache, and
/// the stages would cost more instructions than they save in waiting.
const DEEP_PREFETCH_BYTES: usize = 8 << 20;

/// The loop looks at its cancel flag ([`Simulator::run_with`]) once in
/// this many events (a power of two): some 2-3 ms of a loop at 150-200 ns
/// an event. Every event pays one test of the event count.
pub const CANCEL_EVERY: u64 = 1 << 14;

/// The most rows a run may record in its traces, web100 samples and packet
/// log together (a `tcplab run` stopped at the cap peaks at about 0.7 GB): past it
/// the run stops ([`Halt::Rows`]) instead of taking memory without bound.
/// Looked at with the cancel flag.
pub const MAX_RECORDED_ROWS: usize = 20_000_000;

/// Why a run stopped before its end: it would have gone on past what a run
/// may do, or its caller cancelled it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Halt {
    /// Without a stop time, still going at [`Time::LONGEST_RUN`].
    LongestRun,
    /// The next periodic sample would be one more than [`MAX_SAMPLES`].
    Samples,
    /// The caller's cancel flag was set (Ctrl-C in the Python front).
    Cancelled,
    /// The traces, web100 samples and packet log held more than
    /// [`MAX_RECORDED_ROWS`] rows.
    Rows,
}

impl Halt {
    /// The scenario error that says so, of the run where it stopped (without
    /// building its results: a run stopped for its rows holds millions).
    fn error(self, sim: &Simulator) -> crate::error::Error {
        let open = sim.tcp.live().filter(|(c, _)| c.receiver.done_at().is_none() && !c.aborted()).min_by_key(|&(_, flow)| flow);
        let stuck = open.map_or_else(String::new, |(c, _)| format!(" application '{}' still had a transfer to complete;", sim.apps.apps[c.owner as usize].name));
        let sim_seconds = sim.now.as_secs_f64();
        let (field, message) = match self {
            Halt::LongestRun => (
                "sim.duration",
                format!(
                    "is 'none' (until every transfer completes), but the run had not ended after 100,000,000 s of simulated time, the longest run \
                     allowed:{stuck} a connection that can never deliver retransmits forever with tcp.max_retries = 'none'; set a duration"
                ),
            ),
            Halt::Cancelled => ("scenario", format!("the run was cancelled at {sim_seconds:.3} s of simulated time")),
            Halt::Rows => (
                "trace",
                format!(
                    "recorded {} rows of traces, web100 samples and logged packets by {:.3} s of simulated time, more than the {MAX_RECORDED_ROWS} \
                     a run may record: trace fewer applications or links, sample less often, or run less long",
                    sim.tracer.rows.len() + sim.tracer.web100_rows.len() + sim.net.logged_until(sim.now),
                    sim_seconds
                ),
            ),
            Halt::Samples => (
                "trace.interval",
                format!(
                    "took {MAX_SAMPLES} samples of each traced connection (at {:.3} s of simulated time) and the run had not ended:{stuck} at most \
                     {MAX_SAMPLES} are allowed: sample less often, or give sim.duration",
                    sim_seconds
                ),
            ),
        };
        crate::error::Error::Invalid { field: field.into(), message }
    }
}

pub struct Simulator {
    now: Time,
    stop: Option<Time>,
    events: EventQueue<Ev>,
    net: Network,
    tcp: Endpoints,
    apps: Apps,
    tracer: Tracer,
    seg_buf: Vec<Segment>,
    processed: u64,
    /// Periodic samples taken.
    samples: u64,
    halted: Option<Halt>,
    /// Prefetch in stages, several events ahead (the per-flow state is
    /// larger than a cache holds).
    deep_prefetch: bool,
    /// The packet of the event whose route entry and connection were
    /// prefetched last ([`Simulator::prefetch_deep`]).
    staged: u32,
    /// The connection whose timer event was prefetched last, likewise.
    staged_conn: u32,
    /// The application whose wake-up was prefetched last, likewise.
    staged_app: u32,
    /// [`MAX_RECORDED_ROWS`], lower in tests.
    max_recorded_rows: usize,
    /// The rows of connections whose slots were used again
    /// ([`Endpoints::recycle`]), and the names they share.
    retired: Retired,
    names: results::FlowNames,
    /// Scratch space for the flows that went quiet.
    quiet_buf: Vec<u32>,
}

/// A connection's view of the rest of the simulation.
struct Io<'a> {
    now: Time,
    net: &'a mut Network,
    events: &'a mut EventQueue<Ev>,
    tracer: &'a mut Tracer,
    buf: &'a mut Vec<Segment>,
}

impl Wire for Io<'_> {
    #[inline]
    fn now(&self) -> Time {
        self.now
    }
    #[inline(always)]
    fn transmit(&mut self, p: Packet, head: RouteHead, sack: &[(u64, u64)]) {
        let events = &mut *self.events;
        self.net.send(self.now, p, head, sack, &mut |t, link, pkt| events.push(t, Ev::Link { link, pkt }));
    }
    #[inline]
    fn wake(&mut self, conn: u32, timer: Timer, at: Time, gen: u32) {
        self.events.push(at, Ev::Conn { conn, timer, gen });
    }
    #[inline]
    fn sent(&mut self, conn: &Connection) {
        self.tracer.on_sent(self.now, conn);
    }
    #[inline]
    fn take_segments(&mut self) -> Vec<Segment> {
        std::mem::take(self.buf)
    }
    #[inline]
    fn put_segments(&mut self, buf: Vec<Segment>) {
        *self.buf = buf;
    }
    #[inline]
    fn room(&mut self, link: u32, bytes: u32) -> u64 {
        self.net.room(self.now, link, bytes)
    }
}

/// An application's view: its connections, through the TCP endpoints.
struct AppIo<'a> {
    app: u32,
    tcp: &'a mut Endpoints,
    io: Io<'a>,
}

impl Transport for AppIo<'_> {
    fn now(&self) -> Time {
        self.io.now
    }
    fn open(&mut self, server: u32, size: Option<u64>, tag: u64) -> u32 {
        let c = self.tcp.create(self.app, server, size, tag, self.io.now);
        self.io.net.add_flow(c, self.app);
        if self.io.net.capturing() {
            let header = self.tcp.capture_header(c, self.io.net);
            self.io.net.capture_flow(c, header);
        }
        let conn = &mut self.tcp.conns[c as usize];
        self.io.tracer.on_open(self.io.now, conn);
        conn.open(&mut self.io);
        c
    }
    fn exchange(&mut self, conn: u32, bytes: u32, reply: u64, tag: u64) {
        self.tcp.conns[conn as usize].exchange(&mut self.io, bytes, reply, tag);
    }
    fn has_handshake(&self, conn: u32) -> bool {
        self.tcp.conns[conn as usize].has_handshake()
    }
    fn wake_at(&mut self, at: Time) {
        self.io.events.push(at, Ev::App(self.app));
    }
}

/// Borrow the parts a connection or an application acts through.
macro_rules! io {
    ($s:ident) => {
        Io { now: $s.now, net: &mut $s.net, events: &mut $s.events, tracer: &mut $s.tracer, buf: &mut $s.seg_buf }
    };
}

impl Simulator {
    pub fn new(sc: &Scenario) -> Result<Simulator> {
        let Parts { net, tcp, apps, tracer } = build(sc)?;
        let mut events = EventQueue::new();
        for (i, a) in apps.apps.iter().enumerate() {
            events.push(a.start, Ev::App(i as u32));
        }
        if let Some(iv) = tracer.interval.filter(|_| tracer.sampling()) {
            events.push(Time::ZERO + iv, Ev::Sample);
        }
        let mut sim = Simulator { now: Time::ZERO, stop: sc.stop_ns.map(Time::from_ns), events, net, tcp, apps, tracer, seg_buf: Vec::new(), processed: 0, samples: 0, halted: None, deep_prefetch: false, staged: NO_PACKET, staged_conn: u32::MAX, staged_app: u32::MAX, max_recorded_rows: MAX_RECORDED_ROWS, retired: Retired::default(), names: Default::default(), quiet_buf: Vec::new() };
        let recycle = sc.recycle_connections.unwrap_or_else(|| sim.apps.open_while_running() && !sim.net.records_flows() && !sim.tracer.follows_connections());
        if recycle {
            sim.tcp.recycle = true;
            sim.net.count_flows();
        }
        let stop = sim.stop;
        let opened = sim.apps.opened_at_start(stop);
        sim.tcp.reserve(opened);
        sim.deep_prefetch = sc.deep_prefetch.unwrap_or_else(|| sim.flow_state_bytes() > DEEP_PREFETCH_BYTES);
        if sim.deep_prefetch {
            // The stages look up to three events ahead of the one served.
            sim.events.keep_due(3);
        }
        Ok(sim)
    }

    /// The memory of the per-flow state an event may touch: every
    /// connection (one per application, at least) and every link.
    fn flow_state_bytes(&self) -> usize {
        self.apps.apps.len() * std::mem::size_of::<Connection>() + self.net.links.len() * std::mem::size_of::<crate::net::Link>()
    }

    /// Run to the stop time, or until nothing is left to do. A run without
    /// a stop time that would go past [`Time::LONGEST_RUN`], or take more
    /// than [`MAX_SAMPLES`] periodic samples, stops there ([`Simulator::halted`]).
    pub fn run(&mut self) {
        self.run_with(None)
    }

    /// [`Simulator::run`], stopping early ([`Halt::Cancelled`]) once `cancel`
    /// is set: the loop looks at it every [`CANCEL_EVERY`] events.
    pub fn run_with(&mut self, cancel: Option<&AtomicBool>) {
        let end = self.stop.unwrap_or(Time::LONGEST_RUN);
        while let Some(t) = self.events.peek_time() {
            if t > end {
                if self.stop.is_none() {
                    self.halted = Some(Halt::LongestRun);
                }
                break;
            }
            if self.processed.is_multiple_of(CANCEL_EVERY) {
                self.halted = self.look(cancel);
                if self.halted.is_some() {
                    break;
                }
            }
            let (t, ev) = self.events.pop().expect("peeked");
            if self.deep_prefetch {
                self.prefetch_deep();
            } else {
                self.prefetch_next();
            }
            self.now = t;
            self.processed += 1;
            match ev {
                Ev::Link { link, .. } => self.on_link(link),
                Ev::Conn { conn, timer, gen } => {
                    self.tcp.conns[conn as usize].on_timer(&mut io!(self), timer, gen);
                    if self.tcp.recycle {
                        self.retire(conn);
                    }
                }
                Ev::App(a) => {
                    let mut t = AppIo { app: a, tcp: &mut self.tcp, io: io!(self) };
                    self.apps.on_wake(a, &mut t);
                }
                Ev::Stop => {
                    self.stop = Some(t);
                    break;
                }
                Ev::Sample => {
                    self.tracer.sample(self.now, &self.tcp.conns);
                    self.samples += 1;
                    // Keep sampling while anything else is going on.
                    if !self.events.is_empty() {
                        let next = self.now + self.tracer.interval.expect("sampling");
                        if self.samples == MAX_SAMPLES && next <= end {
                            self.halted = Some(Halt::Samples);
                            break;
                        }
                        self.events.push(next, Ev::Sample);
                    }
                }
            }
        }
        if let (Some(s), None) = (self.stop, self.halted) {
            self.now = s;
        }
    }

    /// Start loading the link and packet, or the connection, the next event
    /// acts on: enough while the per-flow state mostly fits in cache.
    #[inline]
    fn prefetch_next(&self) {
        match self.events.peek() {
            Some(&Ev::Link { link, pkt }) => {
                self.net.prefetch_link_arrival(link & !PORT_WAKE);
                self.net.prefetch_packet(pkt);
            }
            Some(&Ev::Conn { conn, .. }) => prefetch(self.tcp.conns.as_ptr().wrapping_add(conn as usize)),
            _ => {}
        }
    }

    /// Start loading what the next three events will read, in stages, so
    /// that the cache misses of several events overlap. With tens of
    /// thousands of flows nearly every link, packet, route entry and
    /// connection an event touches is out of cache, and each names the
    /// next, so one event ahead only the first of them can be asked for.
    /// - Three events ahead: the packet of a link arrival.
    /// - Two ahead: the link; through the packet (loaded by now), its route
    ///   entry and, where the packet ends its route, its connection (for
    ///   data, up to the end of its receiver; for an ACK, every line but the
    ///   receiver's: its processing reads most of them). A timer's
    ///   connection: the side the timer belongs to.
    /// - The next event, when it went through the stage before: through its
    ///   link, packet and route entry (loaded by now), the packet in flight
    ///   after it on the link and the links its packet goes on to or, when
    ///   its route ends, the link the connection's answer goes out on.
    ///
    /// Events not yet due are not looked at. Only hints: results do not
    /// depend on them.
    #[inline(never)]
    fn prefetch_deep(&mut self) {
        let conns = self.tcp.conns.as_ptr();
        let staged = std::mem::replace(&mut self.staged, NO_PACKET);
        let staged_conn = std::mem::replace(&mut self.staged_conn, u32::MAX);
        let staged_app = std::mem::replace(&mut self.staged_app, u32::MAX);
        if let Some(&Ev::Link { pkt, .. }) = self.events.peek_due(2) {
            self.net.prefetch_packet(pkt);
        }
        match self.events.peek_due(1) {
            Some(&Ev::Link { link, pkt }) if link & PORT_WAKE == 0 => {
                self.net.prefetch_link_arrival(link);
                if let Some((c, kind, last)) = self.net.prefetch_route_of(pkt) {
                    // The connection only where the packet ends its route:
                    // asked for at a hop before, its lines come milliseconds
                    // early and, with many flows, are evicted again before
                    // the last hop reads them. (No prefetch of the packet
                    // here: it is read.)
                    let conn = conns.wrapping_add(c as usize);
                    match kind {
                        _ if !last => {}
                        PacketKind::Data => prefetch_bytes(conn, Connection::CLIENT_SIDE_BYTES),
                        PacketKind::Ack => Connection::prefetch_server_side(conn),
                        _ => prefetch_whole(conn),
                    }
                    self.staged = pkt;
                }
            }
            Some(&Ev::Conn { conn, timer, .. }) => {
                let c = conns.wrapping_add(conn as usize);
                match timer {
                    Timer::Rto => Connection::prefetch_server_side(c),
                    Timer::DelAck => prefetch_bytes(c, Connection::CLIENT_SIDE_BYTES),
                    Timer::Syn | Timer::SynAck | Timer::Message | Timer::Release => prefetch_whole(c),
                }
                self.staged_conn = conn;
            }
            Some(&Ev::App(a)) => {
                // An application's start reads the application and its
                // profile and opens a connection in the next free slot.
                prefetch_whole(self.apps.apps.as_ptr().wrapping_add(a as usize));
                prefetch_whole(self.tcp.profiles.as_ptr().wrapping_add(a as usize));
                prefetch_whole(conns.wrapping_add(self.tcp.next_slot()));
                self.staged_app = a;
            }
            _ => {}
        }
        match self.events.peek() {
            Some(&Ev::Link { link, pkt }) if link & PORT_WAKE == 0 => {
                if staged == pkt {
                    if let Some((c, kind)) = self.net.prefetch_arrival(link, pkt) {
                        if let Some(conn) = self.tcp.conns.get(c as usize) {
                            self.net.prefetch_link_offer(conn.reply_link(kind));
                        }
                    }
                } else {
                    self.net.prefetch_link_arrival(link);
                    self.net.prefetch_packet(pkt);
                }
            }
            Some(&Ev::Conn { conn, timer, .. }) => {
                if staged_conn == conn {
                    // Its connection was asked for an event ago: what a
                    // firing timer sends goes out on one of its routes' heads.
                    if let Some(c) = self.tcp.conns.get(conn as usize) {
                        self.net.prefetch_link_offer(c.timer_link(timer));
                    }
                } else {
                    prefetch_whole(conns.wrapping_add(conn as usize));
                }
            }
            Some(&Ev::App(a)) if staged_app == a => {
                // Its profile was asked for an event ago: a connection it
                // opens sends on one of its routes' heads.
                if let Some(p) = self.tcp.profiles.get(a as usize) {
                    self.net.prefetch_link_offer(p.heads.0.first);
                    self.net.prefetch_link_offer(p.heads.1.first);
                }
            }
            _ => {}
        }
    }

    #[inline]
    fn on_link(&mut self, l: u32) {
        let events = &mut self.events;
        let Some(d) = self.net.on_link(self.now, l, &mut |t, link, pkt| events.push(t, Ev::Link { link, pkt })) else { return };
        let c = d.packet.conn as usize;
        let Some(ev) = self.tcp.conns[c].on_packet(&mut io!(self), &d.packet, d.sack()) else { return };
        let (a, tag) = (self.tcp.conns[c].owner, self.tcp.conns[c].tag);
        let mut t = AppIo { app: a, tcp: &mut self.tcp, io: io!(self) };
        self.apps.on_event(a, c as u32, tag, ev, &mut t);
        if self.apps.all_finished {
            // After what is already due at this instant.
            self.apps.all_finished = false;
            self.events.push(self.now, Ev::Stop);
        }
        self.tcp.conns[c].after_event(&mut io!(self));
        if self.tcp.recycle && self.tcp.conns[c].finished() && !self.apps.holds(a, c as u32) {
            self.tcp.release(c as u32);
            self.retire(c as u32);
        }
    }

    /// The loop's look every [`CANCEL_EVERY`] events: retire what can be
    /// of the connections whose last packet left the network since the last
    /// look (when a slot is freed changes no result), then stop if `cancel`
    /// is set or the recorded rows passed their cap.
    #[cold]
    #[inline(never)]
    fn look(&mut self, cancel: Option<&AtomicBool>) -> Option<Halt> {
        if self.net.any_quiet() {
            let mut quiet = std::mem::take(&mut self.quiet_buf);
            self.net.take_quiet(&mut quiet);
            for &c in &quiet {
                self.retire(c);
            }
            self.quiet_buf = quiet;
        }
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Some(Halt::Cancelled);
        }
        if self.tracer.rows.len() + self.tracer.web100_rows.len() + self.net.logged() > self.max_recorded_rows {
            return Some(Halt::Rows);
        }
        None
    }

    /// With [`Endpoints::recycle`]: if the connection in slot `c` was
    /// released and nothing of it is left, in the event queue or in the
    /// network, keep its row and free its slot. Nothing can reach it any
    /// more, so its row is final.
    #[inline(never)]
    fn retire(&mut self, c: u32) {
        if !self.tcp.quiet(c) || self.net.flow_packets(c) > 0 {
            return;
        }
        let flow = self.tcp.flow_of(c);
        let row = results::flow_row(&self.tcp.conns[c as usize], flow, &self.net, &self.tcp, &self.apps, self.now);
        let (net, apps, names) = (&self.net, &self.apps, &mut self.names);
        self.retired.push(row, |r| names.name(r, net, apps));
        self.tcp.free(c);
    }

    /// Why [`Simulator::run`] stopped before the run's end, if it did.
    pub fn halted(&self) -> Option<Halt> {
        self.halted
    }

    /// The result tables. `wall_seconds` is the caller's measurement.
    pub fn results(&self, wall_seconds: f64) -> Results {
        assert!(self.retired.all_rows(), "the rows of recycled connections went into columns: take_columns gives the results");
        let kept = results::Kept { traces: self.tracer.rows.clone(), web100: self.tracer.web100_rows.clone(), retired: self.retired.copy(), names: &self.names };
        results::build(&self.net, &self.tcp, &self.apps, kept, self.now, self.processed, wall_seconds)
    }

    /// [`Simulator::results`], the trace and web100 rows and the rows of
    /// recycled connections moved out instead of copied (a long trace holds
    /// millions): a second call has none of them.
    pub fn take_results(&mut self, wall_seconds: f64) -> Results {
        assert!(self.retired.all_rows(), "the rows of recycled connections went into columns: take_columns gives the results");
        self.take_columns(wall_seconds).expect("rows without a helper").0
    }

    /// Have the rows of recycled connections put into columns as the run
    /// goes ([`crate::stats::retired`]), for a caller that wants the results
    /// as columns: [`Simulator::take_columns`] then gives them. (A run that
    /// recycles nothing keeps its rows as before: no names are copied for it.)
    pub fn retire_into_columns(&mut self) {
        if !self.tcp.recycle {
            return;
        }
        let names = Names { apps: self.apps.apps.iter().map(|a| a.name.clone()).collect(), nodes: self.net.nodes.clone() };
        self.retired.into_columns(names);
    }

    /// [`Simulator::take_results`] for a run whose rows of recycled
    /// connections may be in columns ([`Simulator::retire_into_columns`]):
    /// the results, whose flows then start after those in the columns, and
    /// those columns (see [`crate::stats::to_json_columns_after`]).
    pub fn take_columns(&mut self, wall_seconds: f64) -> std::result::Result<(Results, Option<Columns>), crate::stats::columns::Error> {
        let (columns, retired) = std::mem::take(&mut self.retired).finish()?;
        let kept = results::Kept { traces: std::mem::take(&mut self.tracer.rows), web100: std::mem::take(&mut self.tracer.web100_rows), retired, names: &self.names };
        Ok((results::build(&self.net, &self.tcp, &self.apps, kept, self.now, self.processed, wall_seconds), columns))
    }
}

/// Check a normalized scenario as a run would, without running it: it
/// parses and builds (nodes, links, routes, applications and their TCP
/// settings) or gives the error the run would give. A sweep checks each
/// configuration this way before any of its runs starts.
pub fn check_json(scenario_json: &str) -> Result<()> {
    let sc = Scenario::from_json(scenario_json)?;
    Simulator::new(&sc).map(drop)
}

/// Parse a normalized scenario, run it, and return the results.
pub fn run_json(scenario_json: &str) -> Result<Results> {
    run_json_with(scenario_json, &[])
}

/// As [`run_json`], for a scenario whose packed columns refer to `blobs`.
pub fn run_json_with(scenario_json: &str, blobs: &[&[u8]]) -> Result<Results> {
    let (r, _, sim, sc) = run_parts(scenario_json, blobs, || (), None, false)?;
    free_later(r.flows.len(), (sim, sc));
    Ok(r)
}

/// [`run_json_with`], returning what `encode` makes of the results, and
/// calling `at_loop` once the simulation is built, just before its loop
/// starts (not at all for a scenario that set-up refuses). The Python front
/// starts importing pandas there, on the core that set-up's helper threads
/// no longer need. The results are freed as the simulation is: off the
/// caller's thread where the run is large. (The simulation is freed while
/// `encode` runs: waiting would spare `encode` some 0.04 s at 100,000
/// flows, as the two take turns at the memory map, but raise the peak
/// memory by about 100 MB.)
///
/// With `cancel`, the loop stops once it is set, and the run is an error
/// (the scenario field, and "the run was cancelled").
pub fn run_json_encoded<T>(
    scenario_json: &str,
    blobs: &[&[u8]],
    at_loop: impl FnOnce(),
    cancel: Option<&AtomicBool>,
    encode: impl FnOnce(&Results) -> T,
) -> Result<T> {
    let (r, _, sim, sc) = run_parts(scenario_json, blobs, at_loop, cancel, false)?;
    free_later(r.flows.len(), (sim, sc));
    let out = encode(&r);
    free_later(r.flows.len(), r);
    Ok(out)
}

/// [`run_json_encoded`] with the results as [`crate::stats::to_json_columns`]
/// writes them (its blobs too, with `with_blobs`), the rows of recycled
/// connections put into columns as the run goes
/// ([`Simulator::retire_into_columns`]), so that a long run of short
/// transfers does not hold them as rows as well.
pub fn run_json_columns(
    scenario_json: &str,
    blobs: &[&[u8]],
    at_loop: impl FnOnce(),
    cancel: Option<&AtomicBool>,
    with_blobs: bool,
) -> Result<(String, Vec<Vec<u8>>)> {
    let (r, before, sim, sc) = run_parts(scenario_json, blobs, at_loop, cancel, true)?;
    let flows = before.as_ref().map_or(0, Columns::rows) + r.flows.len();
    free_later(flows, (sim, sc));
    let mut out = Vec::new();
    let text = crate::stats::to_json_columns_after(&r, before, with_blobs.then_some(&mut out)).map_err(|e| crate::error::Error::Parse(e.0))?;
    free_later(flows, r);
    Ok((text, out))
}

/// Parse, build, run and tabulate (with `columns`, [`Simulator::take_columns`]);
/// the simulation and its scenario are returned for the caller to free.
fn run_parts(scenario_json: &str, blobs: &[&[u8]], at_loop: impl FnOnce(), cancel: Option<&AtomicBool>, columns: bool) -> Result<(Results, Option<Columns>, Simulator, Scenario)> {
    let t0 = std::time::Instant::now();
    let sc = Scenario::from_json_with(scenario_json, blobs)?;
    let mut sim = Simulator::new(&sc)?;
    if columns {
        sim.retire_into_columns();
    }
    at_loop();
    let t1 = std::time::Instant::now();
    sim.run_with(cancel);
    let t2 = std::time::Instant::now();
    let captures = sim.net.finish_captures().map_err(|message| crate::error::Error::Invalid { field: "trace.pcap_dir".into(), message })?;
    if let Some(halt) = sim.halted() {
        return Err(halt.error(&sim));
    }
    let (mut r, before) = sim.take_columns((t2 - t1).as_secs_f64()).map_err(|e| crate::error::Error::Parse(e.0))?;
    r.captures = captures;
    r.engine.setup_seconds = (t1 - t0).as_secs_f64();
    r.engine.results_seconds = t2.elapsed().as_secs_f64();
    Ok((r, before, sim, sc))
}

/// Free `x` (a run of `flows` flows). Freeing a large simulation (every
/// connection, queue and packet) takes a noticeable time at 100,000 flows;
/// the caller need not wait for it. Where no thread can be started, the
/// refused closure frees it here.
fn free_later<T: Send + 'static>(flows: usize, x: T) {
    if flows >= 10_000 {
        let _ = std::thread::Builder::new().name("tcplab-free".into()).spawn(move || drop(x));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connections_opened_at_start_are_made_room_for_at_set_up() {
        // A burst of 3 flows and a bulk transfer at 0 s, and a bulk transfer
        // starting after the stop time: 4 connections open as their
        // applications start, and none of them moves the others.
        let app = |name: &str, kind: &str, start_ns: u64, extra: &str| {
            format!(r#"{{"name": "{name}", "kind": "{kind}", "src": "s", "dst": "k", "start_ns": {start_ns}, "size_bytes": 30000, "request_bytes": 0{extra}, "tcp": {{tcp}}}}"#)
        };
        let apps = [app("burst", "burst", 0, r#", "flows": 3"#), app("bulk", "bulk", 0, ""), app("late", "bulk", 2_000_000_000, "")].join(", ");
        let sc = crate::testkit::line_srk(&apps);
        let mut sim = Simulator::new(&sc).expect("it builds");
        assert_eq!(sim.apps.opened_at_start(sim.stop), 4);
        assert_eq!(sim.tcp.conns.len(), 0);
        assert!(sim.tcp.conns.capacity() >= 4, "room for {}", sim.tcp.conns.capacity());
        let at = sim.tcp.conns.as_ptr();
        sim.run();
        assert_eq!(sim.tcp.conns.len(), 4);
        assert_eq!(sim.tcp.conns.as_ptr(), at, "the connections stayed where set-up put them");
    }

    /// Two clients over s -> r -> k fetch 20 kB with IW 10 after think
    /// times of 20 ms on average for 20 s, one with a handshake and delayed
    /// ACKs: hundreds of transfers, two or three open at once, and drops
    /// where their first windows meet at s -> r.
    fn two_repeating_clients(recycle: Option<bool>) -> Scenario {
        let app = |name: &str, tcp: String| {
            format!(r#"{{"name": "{name}", "kind": "repeat", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 20000, "request_bytes": 100, "think": {{"type": "exponential", "mean_ns": 20000000}}, "tcp": {tcp}}}"#)
        };
        let iw10 = crate::testkit::TCP.replace(r#""iw_bytes": 1460"#, r#""iw_bytes": 14600"#);
        let shaken = iw10.replace(r#""handshake": false"#, r#""handshake": true"#).replace(r#""delayed_ack": false"#, r#""delayed_ack": true"#);
        let mut sc = crate::testkit::line_srk(&[app("a", iw10.clone()), app("b", shaken)].join(", "));
        sc.stop_ns = Some(20_000_000_000);
        sc.recycle_connections = recycle;
        sc
    }

    #[test]
    fn a_finished_connections_slot_is_used_again_and_the_results_are_the_same() {
        let sc = two_repeating_clients;
        let mut recycled = Simulator::new(&sc(None)).expect("it builds");
        assert!(recycled.tcp.recycle, "on where applications open connections as they run");
        // Off where a packet log records packets by their slot, or where
        // every connection opens as its application starts.
        let mut logged = sc(None);
        logged.trace.links = vec![("s".into(), "r".into())];
        assert!(!Simulator::new(&logged).expect("it builds").tcp.recycle);
        let bulk = crate::testkit::line_srk(r#"{"name": "bulk", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 30000, "request_bytes": 0, "tcp": {tcp}}"#);
        assert!(!Simulator::new(&bulk).expect("it builds").tcp.recycle);
        recycled.run();
        let mut kept = Simulator::new(&sc(Some(false))).expect("it builds");
        kept.run();
        let (a, b) = (recycled.take_results(0.0), kept.take_results(0.0));
        assert!(a.flows.len() > 300, "{} transfers", a.flows.len());
        assert!(a.links[0].drops > 0, "drops at s -> r");
        assert_eq!(kept.tcp.conns.len(), a.flows.len());
        // A finished sender's retransmission timer is cancelled lazily: its
        // slot waits for the timer's event (up to the 1 s minimum RTO).
        assert!(recycled.tcp.conns.len() * 10 < a.flows.len(), "{} connections kept for {} transfers", recycled.tcp.conns.len(), a.flows.len());
        assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
        assert_eq!(a.flows.iter().map(|f| f.id).collect::<Vec<_>>(), (0..a.flows.len() as u64).collect::<Vec<_>>());
    }

    #[test]
    fn rows_put_into_columns_as_the_run_goes_make_the_columns_of_its_rows() {
        let mut plain = Simulator::new(&two_repeating_clients(None)).expect("it builds");
        plain.run();
        let rows = plain.take_results(0.0);
        let mut blobs = Vec::new();
        let want = crate::stats::to_json_columns(&rows, Some(&mut blobs)).expect("columns");
        // A helper from the 5th retired row on, batches of 7: the rows come
        // to it out of order (the two clients' transfers overlap), and the
        // run ends with transfers open.
        let mut sim = Simulator::new(&two_repeating_clients(None)).expect("it builds");
        (sim.retired.helper_rows, sim.retired.batch_rows) = (5, 7);
        sim.retire_into_columns();
        sim.run();
        assert!(!sim.retired.all_rows(), "a helper took rows");
        let (r, before) = sim.take_columns(0.0).expect("columns");
        let before = before.expect("columns of the first flows");
        assert!(before.rows() > 300 && before.rows() + r.flows.len() == rows.flows.len(), "{} + {} rows of {}", before.rows(), r.flows.len(), rows.flows.len());
        assert!(r.flows.iter().any(|f| !f.completed), "the rows after the columns hold the open transfers");
        let mut got_blobs = Vec::new();
        let got = crate::stats::to_json_columns_after(&r, Some(before), Some(&mut got_blobs)).expect("columns");
        assert!(got == want && got_blobs == blobs, "the same columns");
        // Without a helper (fewer rows than it starts at): the same again.
        let mut sim = Simulator::new(&two_repeating_clients(None)).expect("it builds");
        sim.retire_into_columns();
        sim.run();
        let (r, before) = sim.take_columns(0.0).expect("columns");
        assert!(before.is_none() && r.flows.len() == rows.flows.len());
        assert_eq!(crate::stats::to_json_columns_after(&r, None, None).expect("columns"), crate::stats::to_json_columns(&rows, None).expect("columns"));
    }

    #[test]
    fn a_set_cancel_flag_stops_the_loop_at_its_next_look() {
        let sc = || {
            let mut sc = crate::testkit::line_srk(r#"{"name": "bulk", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 30000000, "request_bytes": 0, "tcp": {tcp}}"#);
            sc.stop_ns = Some(30_000_000_000);
            sc
        };
        // Unset, the flag changes nothing: the same events as without one.
        let mut plain = Simulator::new(&sc()).expect("it builds");
        plain.run();
        let unset = AtomicBool::new(false);
        let mut watched = Simulator::new(&sc()).expect("it builds");
        watched.run_with(Some(&unset));
        assert!(plain.processed > 2 * CANCEL_EVERY, "{} events: the loop looks at the flag more than twice", plain.processed);
        assert_eq!((watched.processed, watched.now, watched.halted()), (plain.processed, plain.now, None));
        // Set, the loop stops where it next looks: before its first event.
        let mut cancelled = Simulator::new(&sc()).expect("it builds");
        cancelled.run_with(Some(&AtomicBool::new(true)));
        assert_eq!((cancelled.processed, cancelled.halted()), (0, Some(Halt::Cancelled)));
        let err = Halt::Cancelled.error(&cancelled);
        assert_eq!((err.field(), err.message().as_str()), (Some("scenario"), "the run was cancelled at 0.000 s of simulated time"));
    }

    #[test]
    fn a_run_that_records_too_many_rows_stops_where_the_loop_next_looks() {
        // Every packet on s->r logged (enqueue and dequeue) and a trace row at
        // every change of the window: rows grow with the events.
        let mut sc = crate::testkit::line_srk(r#"{"name": "bulk", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 30000000, "request_bytes": 0, "tcp": {tcp}}"#);
        sc.stop_ns = Some(30_000_000_000);
        sc.trace.on_change = true;
        sc.trace.links = vec![("s".into(), "r".into())];
        let mut full = Simulator::new(&sc).expect("it builds");
        full.run();
        let rows = |s: &Simulator| s.tracer.rows.len() + s.tracer.web100_rows.len() + s.net.logged();
        assert_eq!(full.halted(), None);
        assert!(rows(&full) > 20_000, "{} rows", rows(&full));
        let mut capped = Simulator::new(&sc).expect("it builds");
        capped.max_recorded_rows = 10_000;
        capped.run();
        assert_eq!(capped.halted(), Some(Halt::Rows));
        // Stopped at the first look past the cap: a multiple of CANCEL_EVERY events.
        assert!(rows(&capped) > 10_000 && rows(&capped) < rows(&full), "{} rows", rows(&capped));
        assert_eq!(capped.processed % CANCEL_EVERY, 0);
        let err = Halt::Rows.error(&capped);
        assert_eq!(err.field(), Some("trace"));
        // The rows it counts are those its results would hold.
        let r = capped.results(0.0);
        let counted = format!("recorded {} rows of traces, web100 samples and logged packets by {:.3} s", r.traces.len() + r.web100.len() + r.packets.len(), r.engine.sim_seconds);
        assert!(err.message().starts_with(&counted), "{} / {counted}", err.message());
        assert!(err.message().starts_with("recorded ") && err.message().ends_with(" more than the 20000000 a run may record: trace fewer applications or links, sample less often, or run less long"), "{}", err.message());
    }
}
