//! The simulator: builds a network from a [`Scenario`] and runs it.

use crate::app::{App, AppKind};
use crate::cc::CongestionControl;
use crate::engine::rng::RngStream;
use crate::engine::EventQueue;
use crate::error::{Error, Result};
use crate::net::routing::Router;
use crate::net::{Link, Offer, Packet, PacketId, PacketKind, PacketPool, MAX_SACK};
use crate::scenario::{LossSpec, Scenario};
use crate::stats::{EngineRow, FlowRow, LinkRow, PacketRow, PageRow, Results, TraceRow};
use crate::tcp::{Listener, Opener, Receiver, Segment, Sender, State};
use crate::time::{Dur, Time};
use std::collections::HashMap;

#[derive(Copy, Clone, Debug)]
enum Ev {
    /// The head packet of a link reaches the far node.
    Link(u32),
    /// A connection's retransmission timer, valid if `gen` is current.
    Rto { conn: u32, gen: u32 },
    /// A connection's delayed-ACK timer.
    DelAck { conn: u32, gen: u32 },
    /// The client's SYN timer.
    Syn { conn: u32, gen: u32 },
    /// The server's SYN-ACK timer.
    SynAck { conn: u32, gen: u32 },
    /// The client's timer for a request on an open connection.
    Req { conn: u32, gen: u32 },
    /// An application opens its next transfer.
    Start(u32),
    /// Periodic sampling of traced connections.
    Sample,
}

/// A lazily cancelled timer: at most one live event in the queue, identified
/// by generation; moving the deadline later costs nothing until it fires.
#[derive(Default)]
struct TimerSlot {
    gen: u32,
    scheduled: Option<Time>,
}

impl TimerSlot {
    /// The component wants a wake-up at `deadline`: returns the generation of
    /// a new event to schedule, or `None` when the live event comes first.
    fn arm(&mut self, deadline: Option<Time>) -> Option<(Time, u32)> {
        let d = deadline?;
        if self.scheduled.is_some_and(|s| s <= d) {
            return None;
        }
        self.gen = self.gen.wrapping_add(1);
        self.scheduled = Some(d);
        Some((d, self.gen))
    }

    /// An event of generation `gen` fired: whether it is the live one.
    fn fire(&mut self, gen: u32) -> bool {
        if self.gen != gen {
            return false;
        }
        self.scheduled = None;
        true
    }
}

struct Handshake {
    opener: Opener,
    listener: Listener,
    /// Requests after the first (HTTP/1.1's pipelined embedded objects): the
    /// last request id the client sent and the server served, the bytes the
    /// server writes for it, and the client's retransmission timer.
    req_sent: u32,
    req_served: u32,
    req_write: u64,
    req_deadline: Option<Time>,
    req_backoff: u32,
    req_timer: TimerSlot,
    /// Delivered bytes when the outstanding request was sent.
    req_mark: u64,
    syn_timer: TimerSlot,
    synack_timer: TimerSlot,
    request_bytes: u32,
    client_fin: bool,
    closed: bool,
}

struct Conn {
    app: u32,
    data_route: u32,
    ack_route: u32,
    header: u32,
    start: Time,
    sender: Sender,
    receiver: Receiver,
    rto: TimerSlot,
    delack: TimerSlot,
    hs: Option<Box<Handshake>>,
    reported_done: bool,
    traced: bool,
    /// (cwnd, ssthresh, state) of the last trace row written on change.
    last_change: (u64, u64, State),
    /// snd_una at the last periodic sample.
    last_una: u64,
    /// The web page this transfer belongs to, and whether it is the primary object.
    page: Option<(u32, bool)>,
    /// Bytes to transfer (`None`: unbounded).
    size: Option<u64>,
}

/// A web page being fetched.
struct PageState {
    app: u32,
    start: Time,
    /// Transfers still running.
    pending: u32,
    /// HTTP/1.0: embedded object sizes, fetched when the primary completes.
    embedded: Vec<u64>,
    objects: u32,
    bytes: u64,
    end: Option<Time>,
}

struct AppRoutes {
    data: u32,
    ack: u32,
}

struct LossRule {
    app: Option<u32>,
    kind: Option<PacketKind>,
    nth: Vec<u64>,
    next: usize,
    seen: u64,
    rate: Option<f64>,
    rng: RngStream,
}

/// Per-link taps: loss injection rules and the packet log. Empty unless asked for.
#[derive(Default)]
struct Tap {
    rules: Vec<LossRule>,
    log: bool,
}

const LOG_ENQUEUE: u8 = 0;
const LOG_DEQUEUE: u8 = 1;
const LOG_DROP: u8 = 2;

struct LogRow {
    t: Time,
    link: u32,
    event: u8,
    conn: u32,
    kind: PacketKind,
    seq: u64,
    len: u32,
    retx: bool,
}

pub struct Simulator {
    now: Time,
    stop: Option<Time>,
    events: EventQueue<Ev>,
    pool: PacketPool,
    links: Vec<Link>,
    /// Loss injection and logging, per link; `tapped[l]` says whether to look.
    taps: Vec<Tap>,
    tapped: Vec<bool>,
    routes: Vec<Box<[u32]>>,
    nodes: Vec<String>,
    apps: Vec<App>,
    app_routes: Vec<AppRoutes>,
    app_traced: Vec<bool>,
    handshake: Vec<bool>,
    pages: Vec<PageState>,
    conns: Vec<Conn>,
    seg_buf: Vec<Segment>,
    trace_interval: Option<Dur>,
    trace_on_change: bool,
    traces: Vec<TraceRow>,
    log: Vec<LogRow>,
    processed: u64,
    delivered: u64,
    dropped: u64,
}

impl Simulator {
    pub fn new(sc: &Scenario) -> Result<Simulator> {
        let mut index = HashMap::new();
        for (i, n) in sc.nodes.iter().enumerate() {
            if index.insert(n.as_str(), i as u32).is_some() {
                return Err(Error::Invalid { field: format!("nodes[{i}]"), message: format!("node '{n}' is declared twice") });
            }
        }
        let node = |field: String, name: &str| -> Result<u32> {
            index.get(name).copied().ok_or_else(|| Error::Invalid { field, message: format!("unknown node '{name}'") })
        };
        let mut links = Vec::with_capacity(sc.links.len());
        let mut ends = Vec::with_capacity(sc.links.len());
        let mut link_index: HashMap<(u32, u32), u32> = HashMap::new();
        for (i, l) in sc.links.iter().enumerate() {
            let field = format!("links[{i}]");
            let a = node(format!("{field}.from"), &l.from)?;
            let b = node(format!("{field}.to"), &l.to)?;
            if a == b {
                return Err(Error::Invalid { field, message: "a link joins two different nodes".into() });
            }
            if l.rate_bps == 0 {
                return Err(Error::Invalid { field: format!("{field}.rate"), message: "must be positive".into() });
            }
            let rng = RngStream::new(sc.seed, &format!("queue/{}->{}", l.from, l.to));
            links.push(Link::new(a, b, l.rate_bps, Dur::from_ns(l.delay_ns), l.queue.build(&field, l.rate_bps, rng)?));
            ends.push((a, b));
            link_index.entry((a, b)).or_insert(i as u32);
        }
        let mut router = Router::new(sc.nodes.len(), &ends);
        let mut routes: Vec<Box<[u32]>> = Vec::new();
        let mut route_ids: HashMap<(u32, u32), u32> = HashMap::new();
        let mut route = |field: &str, a: u32, b: u32| -> Result<u32> {
            if let Some(&r) = route_ids.get(&(a, b)) {
                return Ok(r);
            }
            let path = router.path(a, b).ok_or_else(|| Error::NoRoute {
                field: field.to_string(),
                src: sc.nodes[a as usize].clone(),
                dst: sc.nodes[b as usize].clone(),
            })?;
            routes.push(path.into_boxed_slice());
            let id = (routes.len() - 1) as u32;
            route_ids.insert((a, b), id);
            Ok(id)
        };
        let mut apps: Vec<App> = Vec::with_capacity(sc.apps.len());
        let mut app_routes = Vec::with_capacity(sc.apps.len());
        let mut app_index: HashMap<&str, u32> = HashMap::new();
        let mut handshake = Vec::new();
        let mut events = EventQueue::new();
        for (i, a) in sc.apps.iter().enumerate() {
            let field = format!("apps[{i}]");
            let src = node(format!("{field}.src"), &a.src)?;
            let dst = node(format!("{field}.dst"), &a.dst)?;
            if src == dst {
                return Err(Error::Invalid { field: format!("{field}.dst"), message: "is the same node as src".into() });
            }
            if app_index.insert(a.name.as_str(), i as u32).is_some() {
                return Err(Error::Invalid { field: format!("{field}.name"), message: format!("'{}' is used twice", a.name) });
            }
            let tcp = a.tcp.build(&format!("{field}.tcp"))?;
            let r = AppRoutes { data: route(&field, src, dst)?, ack: route(&field, dst, src)? };
            app_routes.push(r);
            handshake.push(a.tcp.handshake);
            let request_bytes = u32::try_from(a.request_bytes).map_err(|_| Error::Invalid { field: format!("{field}.request"), message: "is too large".into() })?;
            let start = Time::from_ns(a.start_ns);
            events.push(start, Ev::Start(i as u32));
            apps.push(App {
                name: a.name.clone(),
                src,
                dst,
                start,
                size: a.size_bytes,
                kind: a.kind(&field)?,
                tcp,
                rng: RngStream::new(sc.seed, &format!("app/{}", a.name)),
                transfers_started: 0,
                request_bytes,
                pages_started: 0,
            });
        }
        for (i, a) in sc.apps.iter().enumerate() {
            if a.tcp.ssthresh_bdp {
                let r = &app_routes[i];
                let tcp = &mut apps[i].tcp;
                let bdp = bdp_bytes(&links, &routes[r.data as usize], &routes[r.ack as usize], tcp);
                tcp.initial_ssthresh = bdp.max(2 * u64::from(tcp.mss));
            }
        }
        // Taps: loss injection and the packet log.
        let mut taps: Vec<Tap> = (0..links.len()).map(|_| Tap::default()).collect();
        for (i, l) in sc.losses.iter().enumerate() {
            let field = format!("losses[{i}]");
            let (link, rule) = loss_rule(sc.seed, &field, l, &index, &link_index, &app_index)?;
            taps[link as usize].rules.push(rule);
        }
        for (i, (a, b)) in sc.trace.links.iter().enumerate() {
            let field = format!("trace.links[{i}]");
            let (a, b) = (node(field.clone(), a)?, node(field.clone(), b)?);
            let l = *link_index.get(&(a, b)).ok_or_else(|| Error::Invalid { field, message: "no such link".into() })?;
            taps[l as usize].log = true;
        }
        let tapped = taps.iter().map(|t| t.log || !t.rules.is_empty()).collect();
        let tracing = sc.trace.interval_ns.is_some() || sc.trace.on_change;
        let mut app_traced = vec![tracing && sc.trace.apps.is_empty(); apps.len()];
        for (i, name) in sc.trace.apps.iter().enumerate() {
            let a = *app_index.get(name.as_str()).ok_or_else(|| Error::Invalid { field: format!("trace.apps[{i}]"), message: format!("unknown application '{name}'") })?;
            app_traced[a as usize] = tracing;
        }
        let trace_interval = sc.trace.interval_ns.filter(|&n| n > 0).map(Dur::from_ns);
        if let Some(iv) = trace_interval {
            if app_traced.iter().any(|&t| t) {
                events.push(Time::ZERO + iv, Ev::Sample);
            }
        }
        if sc.advance_links {
            for (l, on) in advancing_links(links.len(), &routes).into_iter().enumerate() {
                links[l].set_advancing(on);
            }
        }
        Ok(Simulator {
            now: Time::ZERO,
            stop: sc.stop_ns.map(Time::from_ns),
            events,
            pool: PacketPool::default(),
            links,
            taps,
            tapped,
            routes,
            nodes: sc.nodes.clone(),
            apps,
            app_routes,
            app_traced,
            handshake,
            pages: Vec::new(),
            conns: Vec::new(),
            seg_buf: Vec::new(),
            trace_interval,
            trace_on_change: sc.trace.on_change,
            traces: Vec::new(),
            log: Vec::new(),
            processed: 0,
            delivered: 0,
            dropped: 0,
        })
    }

    /// Run to the stop time, or until nothing is left to do.
    pub fn run(&mut self) {
        while let Some(t) = self.events.peek_time() {
            if self.stop.is_some_and(|s| t > s) {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.processed += 1;
            match ev {
                Ev::Link(l) => self.on_link(l),
                Ev::Rto { conn, gen } => self.on_rto(conn, gen),
                Ev::DelAck { conn, gen } => self.on_delack(conn, gen),
                Ev::Syn { conn, gen } => self.on_syn_timer(conn, gen),
                Ev::SynAck { conn, gen } => self.on_synack_timer(conn, gen),
                Ev::Req { conn, gen } => self.on_req_timer(conn, gen),
                Ev::Start(a) => self.on_start(a),
                Ev::Sample => self.on_sample(),
            }
        }
        if let Some(s) = self.stop {
            self.now = s;
        }
    }

    /// Offer packet `pkt` to `link` now; through advancing links, on to the
    /// links after them at the packet's arrival times.
    #[inline]
    fn forward(&mut self, pkt: PacketId, mut link: u32) {
        let mut at = self.now;
        loop {
            let bytes = self.pool.get(pkt).wire_bytes;
            let tapped = self.tapped[link as usize];
            if tapped && self.tap_drops(at, pkt, link) {
                self.dropped += 1;
                self.pool.free(pkt);
                return;
            }
            let l = &mut self.links[link as usize];
            let offer = l.offer(at, pkt, bytes);
            let advancing = l.is_advancing();
            if tapped && self.taps[link as usize].log {
                match offer {
                    Offer::Dropped => self.log_packet(at, link, LOG_DROP, pkt),
                    Offer::Admitted { tx_start, .. } => {
                        self.log_packet(at, link, LOG_ENQUEUE, pkt);
                        self.log_packet(tx_start, link, LOG_DEQUEUE, pkt);
                    }
                }
            }
            match offer {
                Offer::Dropped => {
                    self.dropped += 1;
                    self.pool.free(pkt);
                    return;
                }
                Offer::Admitted { wake, arrive, .. } => {
                    if !advancing {
                        if let Some(t) = wake {
                            self.events.push(t, Ev::Link(link));
                        }
                        return;
                    }
                    if self.stop.is_some_and(|s| arrive > s) {
                        return; // still propagating when the run ends
                    }
                    let p = self.pool.get_mut(pkt);
                    p.hop += 1;
                    link = self.routes[p.route as usize][p.hop as usize];
                    at = arrive;
                }
            }
        }
    }

    /// Loss injection at `link`: true if the packet is to be dropped.
    fn tap_drops(&mut self, at: Time, pkt: PacketId, link: u32) -> bool {
        let p = *self.pool.get(pkt);
        let app = self.conns[p.conn as usize].app;
        let mut drop = false;
        for r in &mut self.taps[link as usize].rules {
            if r.app.is_some_and(|a| a != app) || r.kind.is_some_and(|k| k != p.kind) {
                continue;
            }
            r.seen += 1;
            while r.next < r.nth.len() && r.nth[r.next] < r.seen {
                r.next += 1;
            }
            if r.nth.get(r.next) == Some(&r.seen) {
                r.next += 1;
                drop = true;
            }
            if let Some(rate) = r.rate {
                if r.rng.uniform01() < rate {
                    drop = true;
                }
            }
        }
        if drop {
            self.links[link as usize].count_injected_drop(p.wire_bytes);
            if self.taps[link as usize].log {
                self.log_packet(at, link, LOG_DROP, pkt);
            }
        }
        drop
    }

    fn log_packet(&mut self, t: Time, link: u32, event: u8, pkt: PacketId) {
        let p = self.pool.get(pkt);
        let seq = if p.kind == PacketKind::Ack { p.ack } else { p.seq };
        self.log.push(LogRow { t, link, event, conn: p.conn, kind: p.kind, seq, len: p.len, retx: p.retx });
    }

    fn on_link(&mut self, l: u32) {
        let (pkt, next) = self.links[l as usize].pop_arrival(self.now);
        if let Some(t) = next {
            self.events.push(t, Ev::Link(l));
        }
        let p = self.pool.get_mut(pkt);
        p.hop += 1;
        let route = &self.routes[p.route as usize];
        if let Some(&link) = route.get(p.hop as usize) {
            self.forward(pkt, link);
        } else {
            let p = *self.pool.get(pkt);
            let sack = (p.nsack > 0).then(|| {
                let mut blocks = [(0u64, 0u64); MAX_SACK];
                for (k, &(s, e)) in self.pool.sack(pkt)[..p.nsack as usize].iter().enumerate() {
                    blocks[k] = (p.ack + u64::from(s), p.ack + u64::from(e));
                }
                blocks
            });
            self.pool.free(pkt);
            self.delivered += 1;
            match p.kind {
                PacketKind::Data => self.on_data(p),
                PacketKind::Ack => self.on_ack(p, sack.as_ref().map_or(&[][..], |b| &b[..p.nsack as usize])),
                PacketKind::Syn => self.on_syn(p.conn),
                PacketKind::SynAck => self.on_synack(p.conn),
                PacketKind::Request => self.on_request(p.conn, p.seq, p.ack),
                PacketKind::Close => {
                    if let Some(hs) = self.conns[p.conn as usize].hs.as_mut() {
                        hs.closed = true;
                    }
                }
            }
        }
    }

    fn inject(&mut self, p: Packet) {
        let first = self.routes[p.route as usize][0];
        let id = self.pool.alloc(p);
        self.forward(id, first);
    }

    /// Send a control packet (no payload beyond `extra` bytes).
    fn send_control(&mut self, c: u32, kind: PacketKind, extra: u32) {
        self.send_control_seq(c, kind, extra, 0);
    }

    /// A request on an open connection: `bytes` of request, id `seq`, carrying ACK `ack`.
    fn send_request(&mut self, c: u32, bytes: u32, id: u64, ack: u64) {
        let conn = &self.conns[c as usize];
        let mut p = Packet::new(c, conn.ack_route, PacketKind::Request, conn.header + bytes);
        p.len = bytes;
        p.seq = id;
        p.ack = ack;
        self.inject(p);
    }

    fn send_control_seq(&mut self, c: u32, kind: PacketKind, extra: u32, seq: u64) {
        let conn = &self.conns[c as usize];
        let route = match kind {
            PacketKind::SynAck | PacketKind::Close | PacketKind::Data => conn.data_route,
            _ => conn.ack_route,
        };
        let mut p = Packet::new(c, route, kind, conn.header + extra);
        p.len = extra;
        p.seq = seq;
        self.inject(p);
    }

    /// Transmit what the sender put in `seg_buf`, then re-arm its timer.
    fn send_segments(&mut self, c: u32) {
        let mut buf = std::mem::take(&mut self.seg_buf);
        let conn = &self.conns[c as usize];
        let (route, header, fin) = (conn.data_route, conn.header, conn.hs.is_some());
        for s in buf.drain(..) {
            let mut p = Packet::new(c, route, PacketKind::Data, s.len + header);
            p.seq = s.seq;
            p.len = s.len;
            p.retx = s.retx;
            p.fin = fin && s.last;
            self.inject(p);
        }
        self.seg_buf = buf;
        self.sync_rto(c);
        if self.trace_on_change && self.conns[c as usize].traced {
            self.trace_change(c);
        }
    }

    fn send_ack(&mut self, c: u32, ack: u64, fin: bool) {
        let conn = &self.conns[c as usize];
        let mut blocks = [(0u64, 0u64); MAX_SACK];
        let n = conn.receiver.sack_blocks(&mut blocks);
        // TCP SACK option: 2 bytes plus 8 per block (RFC 2018 section 3).
        let opt = if n > 0 { 2 + 8 * n as u32 } else { 0 };
        let mut p = Packet::new(c, conn.ack_route, PacketKind::Ack, conn.header + opt);
        p.ack = ack;
        p.fin = fin;
        p.nsack = n as u8;
        let first = self.routes[p.route as usize][0];
        let id = self.pool.alloc(p);
        if n > 0 {
            let slot = self.pool.sack_mut(id);
            for (k, &(s, e)) in blocks[..n].iter().enumerate() {
                slot[k] = ((s - ack) as u32, (e - ack) as u32);
            }
        }
        self.forward(id, first);
    }

    fn on_data(&mut self, p: Packet) {
        let c = p.conn;
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        let ack = conn.receiver.on_data(now, p.seq, p.len);
        if let Some(hs) = conn.hs.as_mut() {
            // The response to an outstanding request has begun.
            if hs.req_deadline.is_some() && p.seq + u64::from(p.len) > hs.req_mark {
                hs.req_deadline = None;
            }
        }
        let newly_done = !conn.reported_done && conn.receiver.done_at().is_some();
        if newly_done {
            conn.reported_done = true;
            // May open the next transfer, or extend this one (a pipelined request).
            self.on_transfer_done(c);
        }
        // The client closes with the ACK that completes the connection's last transfer.
        let conn = &mut self.conns[c as usize];
        let done = conn.reported_done && conn.receiver.done_at().is_some();
        let fin = match conn.hs.as_mut() {
            Some(hs) if done && !hs.client_fin => {
                hs.client_fin = true;
                true
            }
            _ => false,
        };
        if let Some(a) = ack {
            self.send_ack(c, a, fin);
        }
        self.sync_delack(c);
    }

    /// An application's Start event: a new transfer, or a new web page.
    fn on_start(&mut self, a: u32) {
        let app = &mut self.apps[a as usize];
        let web = match &app.kind {
            AppKind::Web(w) => w,
            _ if app.persistent() => {
                // Each transfer of a persistent client is a one-object page.
                app.pages_started += 1;
                let size = app.size.unwrap_or(0);
                let page = self.pages.len() as u32;
                self.pages.push(PageState { app: a, start: self.now, pending: 1, embedded: Vec::new(), objects: 1, bytes: size, end: None });
                self.start_transfer(a, Some(size), Some((page, true)));
                return;
            }
            _ => {
                let size = app.size;
                self.start_transfer(a, size, None);
                return;
            }
        };
        // Draw the page: primary first, then the embedded objects, from the app's stream.
        app.pages_started += 1;
        let primary = web.primary.draw(&mut app.rng);
        let embedded: Vec<u64> = (0..web.embedded).map(|_| web.object.draw(&mut app.rng)).collect();
        let bytes = primary + embedded.iter().sum::<u64>();
        let page = self.pages.len() as u32;
        let objects = 1 + embedded.len() as u32;
        self.pages.push(PageState { app: a, start: self.now, pending: 1, embedded: Vec::new(), objects, bytes, end: None });
        // The primary first; the embedded objects when it completes (HTTP/1.0:
        // on new connections; HTTP/1.1: requested on the same one).
        self.pages[page as usize].embedded = embedded;
        self.start_transfer(a, Some(primary), Some((page, true)));
    }

    /// A transfer's receiver has every byte.
    fn on_transfer_done(&mut self, c: u32) {
        let now = self.now;
        let (a, page) = (self.conns[c as usize].app, self.conns[c as usize].page);
        let Some((p, primary)) = page else {
            if let Some(t) = self.apps[a as usize].next_start(now) {
                self.events.push(t, Ev::Start(a));
            }
            return;
        };
        let pg = &mut self.pages[p as usize];
        let http11 = matches!(&self.apps[a as usize].kind, AppKind::Web(w) if w.http11);
        if primary && http11 && !pg.embedded.is_empty() {
            // HTTP/1.1: the embedded objects are requested, pipelined, on the
            // same connection once the primary has arrived.
            let bytes: u64 = std::mem::take(&mut pg.embedded).iter().sum();
            let req = self.apps[a as usize].request_bytes.saturating_mul(self.apps[a as usize].embedded_count());
            if self.conns[c as usize].hs.is_some() {
                self.request_on(c, (p, false), bytes, req);
                return;
            }
            // Without a handshake requests are not modelled: the server writes at once.
            let conn = &mut self.conns[c as usize];
            conn.page = Some((p, false));
            conn.reported_done = false;
            conn.size = conn.size.map(|s| s + bytes);
            conn.receiver.extend(bytes);
            let mut buf = std::mem::take(&mut self.seg_buf);
            conn.sender.write(now, bytes, &mut buf);
            self.seg_buf = buf;
            self.send_segments(c);
            return;
        }
        pg.pending -= 1;
        if primary && !pg.embedded.is_empty() {
            // HTTP/1.0: the embedded objects, each on its own connection, at once.
            let embedded = std::mem::take(&mut pg.embedded);
            pg.pending += embedded.len() as u32;
            for size in embedded {
                self.start_transfer(a, Some(size), Some((p, false)));
            }
            return;
        }
        if pg.pending == 0 {
            pg.end = Some(now);
            let next = self.apps[a as usize].next_start(now);
            if next == Some(now) && self.apps[a as usize].persistent() && self.conns[c as usize].hs.is_some() {
                // The next transfer at once, requested on this connection.
                self.request_more(c, a);
                return;
            }
            if let Some(t) = next {
                self.events.push(t, Ev::Start(a));
            }
        }
    }

    /// A persistent client's next transfer: a new one-object page, requested
    /// on connection `c`, which carries the client's ACK.
    fn request_more(&mut self, c: u32, a: u32) {
        let now = self.now;
        let app = &mut self.apps[a as usize];
        app.pages_started += 1;
        app.transfers_started += 1;
        let size = app.size.unwrap_or(0);
        let req = app.request_bytes;
        let page = self.pages.len() as u32;
        self.pages.push(PageState { app: a, start: now, pending: 1, embedded: Vec::new(), objects: 1, bytes: size, end: None });
        self.request_on(c, (page, true), size, req);
    }

    /// The client asks, on open connection `c`, for `bytes` more (for `page`)
    /// with a request of `req` bytes that carries its cumulative ACK; it
    /// resends the request after an RTO until the response begins.
    fn request_on(&mut self, c: u32, page: (u32, bool), bytes: u64, req: u32) {
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        conn.page = Some(page);
        conn.reported_done = false;
        conn.size = conn.size.map(|s| s + bytes);
        conn.receiver.extend(bytes);
        let hs = conn.hs.as_mut().expect("requests need an open connection");
        hs.req_sent += 1;
        hs.req_write = bytes;
        hs.req_mark = conn.receiver.delivered();
        hs.req_backoff = 0;
        hs.req_deadline = Some(now + conn.sender.rtt.rto().max(Dur::from_ms(1)));
        let id = u64::from(hs.req_sent);
        let ack = conn.receiver.piggyback_ack();
        self.send_request(c, req, id, ack);
        self.sync_handshake(c);
        self.sync_delack(c);
    }

    fn on_ack(&mut self, p: Packet, sack: &[(u64, u64)]) {
        let c = p.conn;
        let now = self.now;
        let mut buf = std::mem::take(&mut self.seg_buf);
        self.conns[c as usize].sender.on_ack(now, p.ack, sack, &mut buf);
        self.seg_buf = buf;
        self.send_segments(c);
        if p.fin {
            self.send_control(c, PacketKind::Close, 0);
        }
    }

    fn on_syn(&mut self, c: u32) {
        let now = self.now;
        let hs = self.conns[c as usize].hs.as_mut().expect("SYN on a connection with a handshake");
        if hs.listener.on_syn(now) {
            self.send_control(c, PacketKind::SynAck, 0);
        }
        self.sync_handshake(c);
    }

    fn on_synack(&mut self, c: u32) {
        let hs = self.conns[c as usize].hs.as_mut().expect("SYN-ACK on a connection with a handshake");
        hs.opener.on_synack();
        let req = hs.request_bytes;
        self.send_control(c, PacketKind::Request, req);
        self.sync_handshake(c);
    }

    fn on_request(&mut self, c: u32, id: u64, ack: u64) {
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        let hs = conn.hs.as_mut().expect("request on a connection with a handshake");
        if id > 1 {
            // A request on the open connection: its piggybacked ACK first.
            if ack > conn.sender.snd_una() {
                let mut buf = std::mem::take(&mut self.seg_buf);
                conn.sender.on_ack(now, ack, &[], &mut buf);
                self.seg_buf = buf;
                self.send_segments(c);
            }
            // Then serve it, once.
            let conn = &mut self.conns[c as usize];
            let hs = conn.hs.as_mut().expect("request on a connection with a handshake");
            if id as u32 > hs.req_served {
                hs.req_served = id as u32;
                let bytes = hs.req_write;
                let mut buf = std::mem::take(&mut self.seg_buf);
                conn.sender.write(now, bytes, &mut buf);
                self.seg_buf = buf;
                self.send_segments(c);
            }
            return;
        }
        if let Some(sample) = hs.listener.on_request(now) {
            if let Some(r) = sample {
                conn.sender.rtt.sample(r);
                if let Some(srtt) = conn.sender.rtt.srtt() {
                    conn.sender.cc.on_rtt(srtt);
                }
            }
            let mut buf = std::mem::take(&mut self.seg_buf);
            conn.sender.start(now, &mut buf);
            self.seg_buf = buf;
            self.send_segments(c);
        }
        self.sync_handshake(c);
    }

    fn sync_handshake(&mut self, c: u32) {
        let Some(hs) = self.conns[c as usize].hs.as_mut() else { return };
        if let Some((t, gen)) = hs.syn_timer.arm(hs.opener.poll_timeout()) {
            self.events.push(t, Ev::Syn { conn: c, gen });
        }
        if let Some((t, gen)) = hs.synack_timer.arm(hs.listener.poll_timeout()) {
            self.events.push(t, Ev::SynAck { conn: c, gen });
        }
        if let Some((t, gen)) = hs.req_timer.arm(hs.req_deadline) {
            self.events.push(t, Ev::Req { conn: c, gen });
        }
    }

    fn on_syn_timer(&mut self, c: u32, gen: u32) {
        let now = self.now;
        let hs = self.conns[c as usize].hs.as_mut().expect("handshake timer");
        if !hs.syn_timer.fire(gen) {
            return;
        }
        match hs.opener.poll_timeout() {
            Some(d) if d <= now => {
                hs.opener.on_timeout(now);
                self.send_control(c, PacketKind::Syn, 0);
            }
            _ => {}
        }
        self.sync_handshake(c);
    }

    fn on_synack_timer(&mut self, c: u32, gen: u32) {
        let now = self.now;
        let hs = self.conns[c as usize].hs.as_mut().expect("handshake timer");
        if !hs.synack_timer.fire(gen) {
            return;
        }
        match hs.listener.poll_timeout() {
            Some(d) if d <= now => {
                hs.listener.on_timeout(now);
                self.send_control(c, PacketKind::SynAck, 0);
            }
            _ => {}
        }
        self.sync_handshake(c);
    }

    /// The client's request timer: resend the outstanding request, backing off.
    fn on_req_timer(&mut self, c: u32, gen: u32) {
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        let hs = conn.hs.as_mut().expect("request timer");
        if !hs.req_timer.fire(gen) {
            return;
        }
        match hs.req_deadline {
            Some(d) if d <= now => {
                hs.req_backoff = (hs.req_backoff + 1).min(6);
                let rto = conn.sender.rtt.backed_off(hs.req_backoff);
                hs.req_deadline = Some(now + rto);
                let id = u64::from(hs.req_sent);
                let app = conn.app;
                let req = self.apps[app as usize].request_bytes.saturating_mul(self.apps[app as usize].embedded_count().max(1));
                let ack = conn.receiver.delivered();
                self.send_request(c, req, id, ack);
            }
            _ => {}
        }
        self.sync_handshake(c);
    }

    fn sync_rto(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        if let Some((t, gen)) = conn.rto.arm(conn.sender.poll_timeout()) {
            self.events.push(t, Ev::Rto { conn: c, gen });
        }
    }

    fn sync_delack(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        if let Some((t, gen)) = conn.delack.arm(conn.receiver.poll_timeout()) {
            self.events.push(t, Ev::DelAck { conn: c, gen });
        }
    }

    fn on_rto(&mut self, c: u32, gen: u32) {
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        if !conn.rto.fire(gen) {
            return;
        }
        match conn.sender.poll_timeout() {
            None => {}
            Some(d) if d > now => self.sync_rto(c),
            Some(_) => {
                let mut buf = std::mem::take(&mut self.seg_buf);
                conn.sender.on_timeout(now, &mut buf);
                self.seg_buf = buf;
                self.send_segments(c);
            }
        }
    }

    fn on_delack(&mut self, c: u32, gen: u32) {
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        if !conn.delack.fire(gen) {
            return;
        }
        match conn.receiver.poll_timeout() {
            None => {}
            Some(d) if d > now => self.sync_delack(c),
            Some(_) => {
                if let Some(a) = conn.receiver.on_timeout(now) {
                    self.send_ack(c, a, false);
                }
            }
        }
    }

    fn start_transfer(&mut self, a: u32, size: Option<u64>, page: Option<(u32, bool)>) {
        let app = &mut self.apps[a as usize];
        app.transfers_started += 1;
        let tcp = &app.tcp;
        let routes = &self.app_routes[a as usize];
        let c = self.conns.len() as u32;
        let hs = self.handshake[a as usize].then(|| {
            Box::new(Handshake {
                opener: Opener::new(tcp.rtt.initial_rto, tcp.max_backoff),
                listener: Listener::new(tcp.rtt.initial_rto, tcp.max_backoff),
                req_sent: 1,
                req_served: 1,
                req_write: 0,
                req_deadline: None,
                req_backoff: 0,
                req_timer: TimerSlot::default(),
                req_mark: 0,
                syn_timer: TimerSlot::default(),
                synack_timer: TimerSlot::default(),
                request_bytes: app.request_bytes,
                client_fin: false,
                closed: false,
            })
        });
        let sender = Sender::new(tcp, size);
        let last_change = (sender.cc.window(), sender.cc.ssthresh(), sender.state());
        self.conns.push(Conn {
            app: a,
            data_route: routes.data,
            ack_route: routes.ack,
            header: tcp.header,
            start: self.now,
            sender,
            receiver: Receiver::new(tcp, size),
            rto: TimerSlot::default(),
            delack: TimerSlot::default(),
            hs,
            reported_done: false,
            traced: self.app_traced[a as usize],
            last_change,
            last_una: 0,
            page,
            size,
        });
        if self.conns[c as usize].traced && self.trace_on_change {
            self.trace_row(c, None);
        }
        if let Some(hs) = self.conns[c as usize].hs.as_mut() {
            hs.opener.start(self.now);
            self.send_control(c, PacketKind::Syn, 0);
            self.sync_handshake(c);
            return;
        }
        let mut buf = std::mem::take(&mut self.seg_buf);
        self.conns[c as usize].sender.start(self.now, &mut buf);
        self.seg_buf = buf;
        self.send_segments(c);
    }

    // ---------------------------------------------------------------- tracing

    fn trace_row(&mut self, c: u32, tput_bps: Option<f64>) {
        let conn = &self.conns[c as usize];
        let s = &conn.sender;
        let ss = s.cc.ssthresh();
        self.traces.push(TraceRow {
            flow: u64::from(c),
            app: self.apps[conn.app as usize].name.clone(),
            t: self.now.as_secs_f64(),
            cwnd: s.cc.window(),
            ssthresh: (ss != u64::MAX).then_some(ss),
            srtt_s: s.rtt.srtt().map(Dur::as_secs_f64),
            rttvar_s: s.rtt.srtt().map(|_| s.rtt.rttvar().as_secs_f64()),
            rto_s: s.rtt.backed_off(s.backoff()).as_secs_f64(),
            flight: s.flight(),
            snd_una: s.snd_una(),
            snd_nxt: s.snd_nxt(),
            rwnd: s.rwnd(),
            tput_bps,
            state: s.state().name(),
        });
    }

    fn trace_change(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        let key = (conn.sender.cc.window(), conn.sender.cc.ssthresh(), conn.sender.state());
        if key != conn.last_change {
            conn.last_change = key;
            self.trace_row(c, None);
        }
    }

    fn on_sample(&mut self) {
        let iv = self.trace_interval.expect("sampling only with an interval");
        for c in 0..self.conns.len() as u32 {
            let conn = &mut self.conns[c as usize];
            if !conn.traced || conn.sender.is_done() {
                continue;
            }
            let una = conn.sender.snd_una();
            let tput = (una - conn.last_una) as f64 * 8.0 / iv.as_secs_f64();
            conn.last_una = una;
            self.trace_row(c, Some(tput));
        }
        // Keep sampling while anything else is going on.
        if !self.events.is_empty() {
            self.events.push(self.now + iv, Ev::Sample);
        }
    }

    // ---------------------------------------------------------------- results

    /// The result tables. `wall_seconds` is the caller's measurement.
    pub fn results(&self, wall_seconds: f64) -> Results {
        let end = self.now;
        let name = |n: u32| self.nodes[n as usize].clone();
        let flows = self
            .conns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let app = &self.apps[c.app as usize];
                let done = c.receiver.done_at();
                let delivered = c.receiver.delivered();
                let span = done.unwrap_or(end).saturating_since(c.start).as_secs_f64();
                let st = &c.sender.stats;
                FlowRow {
                    id: i as u64,
                    app: app.name.clone(),
                    page: c.page.map(|(p, _)| u64::from(p)),
                    src: name(app.src),
                    dst: name(app.dst),
                    cc: c.sender.cc.name().to_string(),
                    iw: app.tcp.iw_segments(),
                    bytes: c.size,
                    bytes_delivered: delivered,
                    start_s: c.start.as_secs_f64(),
                    end_s: done.map(Time::as_secs_f64),
                    fct_s: done.map(|d| (d - c.start).as_secs_f64()),
                    goodput_bps: if span > 0.0 { delivered as f64 * 8.0 / span } else { 0.0 },
                    data_pkts: st.data_pkts,
                    retx_pkts: st.retx_pkts,
                    retx_fast_pkts: st.retx_fast_pkts,
                    retx_timeout_pkts: st.retx_timeout_pkts,
                    timeouts: st.timeouts,
                    fast_retx: st.fast_retx,
                    dupacks: st.dupacks,
                    sack_blocks: st.sack_blocks,
                    ss_entries: st.ss_entries,
                    ca_entries: st.ca_entries,
                    rwnd_stalls: st.rwnd_stalls,
                    rtt_samples: c.sender.rtt.samples(),
                    srtt_s: c.sender.rtt.srtt().map(Dur::as_secs_f64),
                    syn_sent: c.hs.as_ref().map_or(0, |h| u64::from(h.opener.syn_sent)),
                    synack_sent: c.hs.as_ref().map_or(0, |h| u64::from(h.listener.synack_sent)),
                    closed: c.hs.as_ref().is_some_and(|h| h.closed),
                    completed: done.is_some(),
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let r = l.report(end);
                LinkRow {
                    id: i as u64,
                    src: name(l.from),
                    dst: name(l.to),
                    rate_bps: l.rate_bps,
                    delay_s: l.delay.as_secs_f64(),
                    arrivals: r.arrivals,
                    departures: r.departures,
                    departure_bytes: r.departure_bytes,
                    drops: r.drops,
                    drop_bytes: r.drop_bytes,
                    loss_drops: r.loss_drops,
                    backlog_end: r.backlog_end,
                    propagating_end: r.propagating_end,
                    utilization: r.utilization,
                    queue_avg_pkts: r.queue_avg_pkts,
                    queue_max_pkts: r.queue_max_pkts,
                    queue_max_bytes: r.queue_max_bytes,
                }
            })
            .collect();
        // The packet log in time order (dequeues are known ahead of time).
        let mut order: Vec<usize> = (0..self.log.len()).collect();
        order.sort_by_key(|&i| (self.log[i].t, i));
        let packets = order
            .into_iter()
            .map(|i| &self.log[i])
            .filter(|r| r.t <= end)
            .map(|r| {
                let l = &self.links[r.link as usize];
                PacketRow {
                    t: r.t.as_secs_f64(),
                    link: format!("{}->{}", name(l.from), name(l.to)),
                    event: ["enqueue", "dequeue", "drop"][r.event as usize],
                    flow: u64::from(r.conn),
                    app: self.apps[self.conns[r.conn as usize].app as usize].name.clone(),
                    kind: r.kind.name(),
                    seq: r.seq,
                    len: r.len,
                    retx: r.retx,
                }
            })
            .collect();
        let pages = self
            .pages
            .iter()
            .enumerate()
            .map(|(i, p)| PageRow {
                id: i as u64,
                app: self.apps[p.app as usize].name.clone(),
                start_s: p.start.as_secs_f64(),
                end_s: p.end.map(Time::as_secs_f64),
                delay_s: p.end.map(|e| (e - p.start).as_secs_f64()),
                objects: p.objects,
                bytes: p.bytes,
                completed: p.end.is_some(),
            })
            .collect();
        Results {
            flows,
            links,
            pages,
            traces: self.traces.clone(),
            packets,
            engine: EngineRow {
                events: self.processed,
                sim_seconds: end.as_secs_f64(),
                wall_seconds,
                packets_created: self.pool.created,
                packets_delivered: self.delivered,
                packets_dropped: self.dropped,
                packets_in_network_end: self.pool.live() as u64,
                packet_pool_peak: self.pool.capacity_used() as u64,
            },
        }
    }
}

/// Bandwidth-delay product of a path, bytes: the slowest link's rate times
/// the round trip of a full segment out and an ACK back, with no queueing.
fn bdp_bytes(links: &[Link], data: &[u32], ack: &[u32], tcp: &crate::tcp::TcpConfig) -> u64 {
    let seg = u64::from(tcp.mss + tcp.header);
    let hdr = u64::from(tcp.header);
    let one_way = |path: &[u32], bytes: u64| -> u64 {
        path.iter().map(|&l| {
            let l = &links[l as usize];
            l.delay.as_ns() + Dur::serialization(bytes, l.rate_bps).as_ns()
        }).sum()
    };
    let rtt_ns = one_way(data, seg) + one_way(ack, hdr);
    let rate = data.iter().map(|&l| links[l as usize].rate_bps).min().unwrap_or(0);
    (u128::from(rate) * u128::from(rtt_ns) / 8 / 1_000_000_000) as u64
}

fn loss_rule(
    seed: u64,
    field: &str,
    l: &LossSpec,
    nodes: &HashMap<&str, u32>,
    links: &HashMap<(u32, u32), u32>,
    apps: &HashMap<&str, u32>,
) -> Result<(u32, LossRule)> {
    let inv = |f: &str, m: String| Error::Invalid { field: format!("{field}.{f}"), message: m };
    let a = *nodes.get(l.from.as_str()).ok_or_else(|| inv("link", format!("unknown node '{}'", l.from)))?;
    let b = *nodes.get(l.to.as_str()).ok_or_else(|| inv("link", format!("unknown node '{}'", l.to)))?;
    let link = *links.get(&(a, b)).ok_or_else(|| inv("link", format!("no link {}->{}", l.from, l.to)))?;
    let app = match &l.app {
        Some(n) => Some(*apps.get(n.as_str()).ok_or_else(|| inv("app", format!("unknown application '{n}'")))?),
        None => None,
    };
    let kind = match &l.kind {
        Some(k) => Some(PacketKind::parse(k).ok_or_else(|| inv("kind", format!("'{k}' is not a packet kind")))?),
        None => None,
    };
    if let Some(r) = l.rate {
        if !(0.0..=1.0).contains(&r) {
            return Err(inv("rate", "must be between 0 and 1".into()));
        }
    }
    let mut nth = l.nth.clone();
    nth.sort_unstable();
    nth.dedup();
    Ok((link, LossRule { app, kind, nth, next: 0, seen: 0, rate: l.rate, rng: RngStream::new(seed, &format!("loss/{field}")) }))
}

/// Parse a normalized scenario, run it, and return the results.
pub fn run_json(scenario_json: &str) -> Result<Results> {
    let sc = Scenario::from_json(scenario_json)?;
    let mut sim = Simulator::new(&sc)?;
    let t0 = std::time::Instant::now();
    sim.run();
    Ok(sim.results(t0.elapsed().as_secs_f64()))
}

/// Which links may hand packets on without an arrival event: those whose
/// every packet continues onto a link fed by this link alone (no other link
/// and no local sender feeds it), by every route of the run.
fn advancing_links(n_links: usize, routes: &[Box<[u32]>]) -> Vec<bool> {
    const INJECT: u32 = u32::MAX;
    const NONE: u32 = u32::MAX - 1;
    const MANY: u32 = u32::MAX - 2;
    // The single input of each link, or MANY.
    let mut input = vec![NONE; n_links];
    for r in routes {
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
    for r in routes {
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

    fn routes(rs: &[&[u32]]) -> Vec<Box<[u32]>> {
        rs.iter().map(|r| r.to_vec().into_boxed_slice()).collect()
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
    fn a_second_input_or_a_local_sender_prevents_hand_on() {
        // Link 1 is fed by link 0 and, on another route, by a sender at its own node.
        let rs = routes(&[&[0, 1, 2], &[1, 2]]);
        let adv = advancing_links(3, &rs);
        assert!(!adv[0], "link 1 has a second input (injection)");
        assert!(adv[1], "link 2 is fed by link 1 alone");
        assert!(!adv[2]);
    }
}
