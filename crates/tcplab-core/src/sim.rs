//! The simulator: builds a network from a [`Scenario`] and runs it.

use crate::app::App;
use crate::engine::rng::RngStream;
use crate::engine::EventQueue;
use crate::error::{Error, Result};
use crate::net::routing::Router;
use crate::net::{Link, Offer, Packet, PacketId, PacketKind, PacketPool};
use crate::scenario::Scenario;
use crate::stats::{EngineRow, FlowRow, LinkRow, Results};
use crate::tcp::{Receiver, Segment, Sender, TcpConfig};
use crate::time::{Dur, Time};
use std::collections::HashMap;

#[derive(Copy, Clone, Debug)]
enum Ev {
    /// The head packet of a link reaches the far node.
    Link(u32),
    /// A connection's retransmission timer, valid if `gen` is current.
    Rto { conn: u32, gen: u32 },
    /// A connection's delayed-ACK timer, valid if `gen` is current.
    DelAck { conn: u32, gen: u32 },
    /// An application opens its next transfer.
    Start(u32),
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
    reported_done: bool,
}

struct AppRoutes {
    data: u32,
    ack: u32,
}

pub struct Simulator {
    now: Time,
    stop: Option<Time>,
    events: EventQueue<Ev>,
    pool: PacketPool,
    links: Vec<Link>,
    routes: Vec<Box<[u32]>>,
    nodes: Vec<String>,
    apps: Vec<App>,
    app_routes: Vec<AppRoutes>,
    conns: Vec<Conn>,
    seg_buf: Vec<Segment>,
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
            links.push(Link::new(a, b, l.rate_bps, Dur::from_ns(l.delay_ns), l.queue.build(&field)?));
            ends.push((a, b));
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
        let mut events = EventQueue::new();
        for (i, a) in sc.apps.iter().enumerate() {
            let field = format!("apps[{i}]");
            let src = node(format!("{field}.src"), &a.src)?;
            let dst = node(format!("{field}.dst"), &a.dst)?;
            if src == dst {
                return Err(Error::Invalid { field: format!("{field}.dst"), message: "is the same node as src".into() });
            }
            let tcp = a.tcp.build(&format!("{field}.tcp"))?;
            app_routes.push(AppRoutes { data: route(&field, src, dst)?, ack: route(&field, dst, src)? });
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
            });
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
            routes,
            nodes: sc.nodes.clone(),
            apps,
            app_routes,
            conns: Vec::new(),
            seg_buf: Vec::new(),
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
                Ev::Start(a) => self.start_transfer(a),
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
            let l = &mut self.links[link as usize];
            match l.offer(at, pkt, bytes) {
                Offer::Dropped => {
                    self.dropped += 1;
                    self.pool.free(pkt);
                    return;
                }
                Offer::Admitted { wake, arrive } => {
                    if !l.is_advancing() {
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
            self.pool.free(pkt);
            self.delivered += 1;
            match p.kind {
                PacketKind::Data => self.on_data(p),
                PacketKind::Ack => self.on_ack(p),
            }
        }
    }

    fn inject(&mut self, p: Packet) {
        let first = self.routes[p.route as usize][0];
        let id = self.pool.alloc(p);
        self.forward(id, first);
    }

    fn send_segments(&mut self, c: u32) {
        let mut buf = std::mem::take(&mut self.seg_buf);
        let conn = &self.conns[c as usize];
        let (route, header) = (conn.data_route, conn.header);
        for s in buf.drain(..) {
            self.inject(Packet {
                conn: c,
                route,
                hop: 0,
                wire_bytes: s.len + header,
                kind: PacketKind::Data,
                seq: s.seq,
                len: s.len,
                ack: 0,
                retx: s.retx,
                sent: self.now,
            });
        }
        self.seg_buf = buf;
        self.sync_rto(c);
    }

    fn send_ack(&mut self, c: u32, ack: u64) {
        let conn = &self.conns[c as usize];
        let p = Packet {
            conn: c,
            route: conn.ack_route,
            hop: 0,
            wire_bytes: conn.header,
            kind: PacketKind::Ack,
            seq: 0,
            len: 0,
            ack,
            retx: false,
            sent: self.now,
        };
        self.inject(p);
    }

    fn on_data(&mut self, p: Packet) {
        let c = p.conn;
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        let ack = conn.receiver.on_data(now, p.seq, p.len);
        let newly_done = !conn.reported_done && conn.receiver.done_at().is_some();
        if newly_done {
            conn.reported_done = true;
        }
        if let Some(a) = ack {
            self.send_ack(c, a);
        }
        self.sync_delack(c);
        if newly_done {
            let app = self.conns[c as usize].app;
            if let Some(t) = self.apps[app as usize].next_start(now) {
                self.events.push(t, Ev::Start(app));
            }
        }
    }

    fn on_ack(&mut self, p: Packet) {
        let c = p.conn;
        let now = self.now;
        let mut buf = std::mem::take(&mut self.seg_buf);
        self.conns[c as usize].sender.on_ack(now, p.ack, &mut buf);
        self.seg_buf = buf;
        self.send_segments(c);
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
                    self.send_ack(c, a);
                }
            }
        }
    }

    fn start_transfer(&mut self, a: u32) {
        let app = &mut self.apps[a as usize];
        app.transfers_started += 1;
        let tcp: &TcpConfig = &app.tcp;
        let routes = &self.app_routes[a as usize];
        let c = self.conns.len() as u32;
        self.conns.push(Conn {
            app: a,
            data_route: routes.data,
            ack_route: routes.ack,
            header: tcp.header,
            start: self.now,
            sender: Sender::new(tcp, app.size),
            receiver: Receiver::new(tcp, app.size),
            rto: TimerSlot::default(),
            delack: TimerSlot::default(),
            reported_done: false,
        });
        let mut buf = std::mem::take(&mut self.seg_buf);
        self.conns[c as usize].sender.start(self.now, &mut buf);
        self.seg_buf = buf;
        self.send_segments(c);
    }

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
                FlowRow {
                    id: i as u64,
                    app: app.name.clone(),
                    src: name(app.src),
                    dst: name(app.dst),
                    cc: c.sender.cc.name().to_string(),
                    iw: app.tcp.iw,
                    bytes: app.size,
                    bytes_delivered: delivered,
                    start_s: c.start.as_secs_f64(),
                    end_s: done.map(Time::as_secs_f64),
                    fct_s: done.map(|d| (d - c.start).as_secs_f64()),
                    goodput_bps: if span > 0.0 { delivered as f64 * 8.0 / span } else { 0.0 },
                    data_pkts: c.sender.stats.data_pkts,
                    retx_pkts: c.sender.stats.retx_pkts,
                    timeouts: c.sender.stats.timeouts,
                    fast_retx: c.sender.stats.fast_retx,
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
                    backlog_end: r.backlog_end,
                    propagating_end: r.propagating_end,
                    utilization: r.utilization,
                    queue_avg_pkts: r.queue_avg_pkts,
                    queue_max_pkts: r.queue_max_pkts,
                    queue_max_bytes: r.queue_max_bytes,
                }
            })
            .collect();
        Results {
            flows,
            links,
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
