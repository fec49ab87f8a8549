//! Building a simulation's parts from a normalized [`Scenario`]: the
//! network (links, routes, taps), the TCP profiles, the applications and the
//! tracer. Every reference is checked here and a bad one names its field.

use crate::app::{cycle_pages, App, AppKind, Apps, MAX_CYCLE_CONNECTIONS};
use crate::engine::rng::RngStream;
use crate::error::{Error, Result};
use crate::net::routing::{RouteHead, Router, Routes};
use crate::net::capture::Captures;
use crate::net::{Link, LossRule, Network, PacketKind, Tap};
use crate::scenario::{LossSpec, Scenario};
use crate::stats::Tracer;
use crate::tcp::{Endpoints, Profile, TcpConfig};
use crate::time::{Dur, Time};
use crate::engine::fxhash::FastMap as HashMap;

pub struct Parts {
    pub net: Network,
    pub tcp: Endpoints,
    pub apps: Apps,
    pub tracer: Tracer,
}

fn invalid(field: String, message: impl Into<String>) -> Error {
    Error::Invalid { field, message: message.into() }
}

pub fn build(sc: &Scenario) -> Result<Parts> {
    let mut index = HashMap::default();
    for (i, n) in sc.nodes.iter().enumerate() {
        if index.insert(n.as_str(), i as u32).is_some() {
            return Err(invalid(format!("nodes[{i}]"), format!("node '{n}' is declared twice")));
        }
    }
    // Field names are formatted only for an error.
    let node = |field: &dyn Fn() -> String, name: &str| -> Result<u32> { index.get(name).copied().ok_or_else(|| invalid(field(), format!("unknown node '{name}'"))) };
    let views = sc.link_views()?;
    // Huge pages for the links, mapped by a helper thread meanwhile.
    let room = crate::engine::pages::Prepared::start(views.len());
    let mut links = Vec::with_capacity(views.len());
    let mut ends = Vec::with_capacity(views.len());
    for (i, l) in views.iter().enumerate() {
        let field = || format!("links[{i}]");
        let (a, b) = match l.ends {
            Some(ends) => ends,
            None => (node(&|| format!("{}.from", field()), l.from)?, node(&|| format!("{}.to", field()), l.to)?),
        };
        if a == b {
            return Err(invalid(field(), "a link joins two different nodes"));
        }
        if l.rate_bps == 0 {
            return Err(invalid(format!("{}.rate", field()), "must be positive"));
        }
        let rng = || RngStream::new(sc.seed, &format!("queue/{}->{}", l.from, l.to));
        let mut link = Link::new(a, b, l.rate_bps, Dur::from_ns(l.delay_ns), l.queue.build(&field, l.rate_bps, rng)?);
        let port = l.queue.ubr_port(&field, l.atm, link.cell_time())?;
        if l.atm {
            link.set_atm(port);
        }
        links.push(link);
        ends.push((a, b));
    }
    // Routes, computed once per (source, destination) pair.
    let mut router = Router::new(sc.nodes.len(), &ends);
    let mut routes = Routes::default();
    // Room for every application's two routes from the start: growing by
    // doubling rehashes the map some 18 times at 100,000 flows.
    let mut route_ids: HashMap<(u32, u32), u32> = HashMap::with_capacity_and_hasher(2 * sc.apps.len(), Default::default());
    let mut path = Vec::new();
    let mut route = |field: &str, a: u32, b: u32| -> Result<u32> {
        if let Some(&r) = route_ids.get(&(a, b)) {
            return Ok(r);
        }
        if !router.path_into(a, b, &mut path) {
            return Err(Error::NoRoute { field: field.to_string(), src: sc.nodes[a as usize].clone(), dst: sc.nodes[b as usize].clone() });
        }
        if path.len() > usize::from(u16::MAX) {
            let (from, to) = (&sc.nodes[a as usize], &sc.nodes[b as usize]);
            return Err(invalid(field.to_string(), format!("the route from {from:?} to {to:?} has {} links; at most {} are allowed", path.len(), u16::MAX)));
        }
        let id = routes.push(&path);
        route_ids.insert((a, b), id);
        Ok(id)
    };
    let mut apps = Apps::default();
    let mut tcp = Endpoints::default();
    let mut app_index: HashMap<&str, u32> = HashMap::with_capacity_and_hasher(sc.apps.len(), Default::default());
    let mut shared_cfg: Option<TcpConfig> = None;
    for (i, a) in sc.apps.iter().enumerate() {
        let field = format!("apps[{i}]");
        let (src, dst) = match a.node_ids {
            Some(ids) => ids,
            None => (node(&|| format!("{field}.src"), &a.src)?, node(&|| format!("{field}.dst"), &a.dst)?),
        };
        if src == dst {
            return Err(invalid(format!("{field}.dst"), "is the same node as src"));
        }
        if app_index.insert(a.name.as_str(), i as u32).is_some() {
            return Err(invalid(format!("{field}.name"), format!("'{}' is used twice", a.name)));
        }
        // The shared settings are checked and built once, for the first
        // application that uses them (whose field an error names).
        let cfg = match &a.tcp {
            Some(own) => own.build(&format!("{field}.tcp"))?,
            None => match &shared_cfg {
                Some(c) => TcpConfig::clone(c),
                None => TcpConfig::clone(shared_cfg.insert(sc.app_tcp(i)?.build(&format!("{field}.tcp"))?)),
            },
        };
        let (data_route, ack_route) = (route(&field, src, dst)?, route(&field, dst, src)?);
        let request_bytes = u32::try_from(a.request_bytes).map_err(|_| invalid(format!("{field}.request"), "is too large"))?;
        let mut rng = RngStream::new(sc.seed, &format!("app/{}", a.name));
        let start = match a.start_max_ns {
            None => Time::from_ns(a.start_ns),
            Some(max) if max < a.start_ns => return Err(invalid(format!("{field}.start"), "the range's max is below its min")),
            // A start drawn uniformly from [min, max], first from the application's stream.
            Some(max) => Time::from_ns(rng.uniform(a.start_ns as f64, max as f64).round() as u64),
        };
        let mut kind = a.kind(&field)?;
        if let AppKind::Web(w) = &mut kind {
            if let Some(cycle) = w.cycle {
                // Pages drawn ahead (a cycle and a count) are only those that
                // can start by the stop; and no more than MAX_CYCLE_CONNECTIONS
                // connections open.
                let reachable = cycle_pages(start, cycle, sc.stop_ns.map(Time::from_ns));
                let pages = match (w.pages, reachable) {
                    (Some(p), Some(r)) => p.min(r.max(1)),
                    (None, None) => return Err(invalid(format!("{field}.cycle"), "starts pages for ever: give pages or a stop time")),
                    (p, r) => p.or(r).expect("one of them"),
                };
                let per_page = if w.persistent { 0 } else if w.http11 { 1 } else { 1 + u64::from(w.embedded) };
                if pages.saturating_mul(per_page) > MAX_CYCLE_CONNECTIONS {
                    return Err(invalid(format!("{field}.cycle"), format!("opens {pages} pages of {per_page} connections; at most {MAX_CYCLE_CONNECTIONS} connections are allowed per application")));
                }
                if w.pages.is_some() {
                    w.pages = Some(pages);
                }
            }
        }
        if matches!(&kind, AppKind::Web(w) if w.persistent) && cfg.handshake {
            return Err(invalid(format!("{field}.persistent"), "a persistent web client pipelines its pages, which needs one-way TCP (tcp.handshake = false)"));
        }
        apps.apps.push(App::new(a.name.clone(), src, dst, start, a.size_bytes, kind, rng, request_bytes));
        let mut more = Vec::with_capacity(a.extra_src.len());
        for (j, name) in a.extra_src.iter().enumerate() {
            let f = || format!("{field}.extra_src[{j}]");
            let s = node(&f, name)?;
            if s == dst {
                return Err(invalid(f(), "is the same node as dst"));
            }
            more.push((route(&f(), s, dst)?, route(&f(), dst, s)?, (RouteHead::NONE, RouteHead::NONE)));
        }
        // Only a random clock phase needs the key (formatting it for each of 100,000 applications costs).
        let clock_key = if cfg.clock_phase_random { crate::engine::rng::component_key(sc.seed, &format!("tcp/{}", a.name)) } else { 0 };
        let jitter_key = if cfg.send_jitter > Dur::ZERO { crate::engine::rng::component_key(sc.seed, &format!("jitter/{}", a.name)) } else { 0 };
        let heads = (RouteHead::NONE, RouteHead::NONE);
        tcp.profiles.push(Profile { cfg, data_route, ack_route, heads, open_bytes: request_bytes, more, clock_key, jitter_key, opened: 0 });
    }
    // Links by their ends (the first declared, for a pair declared twice):
    // only loss rules, the packet log and captures name links.
    let mut link_index: HashMap<(u32, u32), u32> = HashMap::default();
    if !(sc.losses.is_empty() && sc.trace.links.is_empty() && sc.trace.pcap.is_empty()) {
        for (i, &ends) in ends.iter().enumerate() {
            link_index.entry(ends).or_insert(i as u32);
        }
    }
    // Taps: loss injection and the packet log.
    let mut taps: Vec<Tap> = (0..links.len()).map(|_| Tap::default()).collect();
    for (i, l) in sc.losses.iter().enumerate() {
        let field = format!("losses[{i}]");
        let (link, rule) = loss_rule(sc.seed, &field, l, &index, &link_index, &app_index)?;
        if !rule_reaches(link, rule.class, rule.kind, &tcp.profiles, &routes) {
            // A direction written backwards ("r1->r0" for the data's
            // "r0->r1") made a rule that dropped nothing, without a word.
            let whose = match &l.app {
                Some(n) => format!("application '{n}'"),
                None => "any application".to_string(),
            };
            let what = rule.kind.map_or("packets".to_string(), |k| format!("'{}' packets", k.name()));
            return Err(invalid(
                format!("{field}.link"),
                format!(
                    "no route of {whose} carries {what} over {}->{}, so the rule would drop nothing (data, SYN-ACKs and closes go from an application's src to its dst; ACKs, SYNs and requests back)",
                    l.from, l.to
                ),
            ));
        }
        taps[link as usize].rules.push(rule);
    }
    for (i, (a, b)) in sc.trace.links.iter().enumerate() {
        let field = format!("trace.links[{i}]");
        let (a, b) = (node(&|| field.clone(), a)?, node(&|| field.clone(), b)?);
        let l = *link_index.get(&(a, b)).ok_or_else(|| invalid(field, "no such link"))?;
        taps[l as usize].log = true;
    }
    let tracing = sc.trace.interval_ns.is_some() || sc.trace.on_change;
    let mut app_traced = vec![tracing && sc.trace.apps.is_empty(); apps.apps.len()];
    for (i, name) in sc.trace.apps.iter().enumerate() {
        let a = *app_index.get(name.as_str()).ok_or_else(|| invalid(format!("trace.apps[{i}]"), format!("unknown application '{name}'")))?;
        app_traced[a as usize] = tracing;
    }
    if !sc.until.is_empty() && sc.stop_ns.is_none() {
        return Err(invalid("sim.until".into(), "needs a stop time (sim.duration): the longest the run may last if they never finish"));
    }
    if !sc.until.is_empty() && !sc.trace.pcap.is_empty() {
        // A capture is written as packets are queued, with the time each
        // will go out: with no stop time known, some would be past the end.
        return Err(invalid("trace.pcap".into(), "cannot be written in a run that sim.until stops: give the run a fixed duration"));
    }
    for (i, name) in sc.until.iter().enumerate() {
        let field = format!("sim.until[{i}]");
        let a = *app_index.get(name.as_str()).ok_or_else(|| invalid(field.clone(), format!("unknown application '{name}'")))?;
        if !apps.wait_for(a) {
            return Err(invalid(field, format!("application '{name}' never finishes: give it a size, a count or a number of pages")));
        }
    }
    let interval = sc.trace.interval_ns.filter(|&n| n > 0).map(Dur::from_ns);
    let names = apps.apps.iter().map(|a| a.name.clone()).collect();
    if sc.trace.web100 && interval.is_none() {
        return Err(invalid("trace.web100".into(), "web100 rows are periodic samples: give trace.interval"));
    }
    let tracer = Tracer::new(interval, sc.trace.on_change, app_traced, names).with_web100(sc.trace.web100);
    let mut captured = Vec::new();
    for (i, (a, b)) in sc.trace.pcap.iter().enumerate() {
        let field = format!("trace.pcap[{i}]");
        let (na, nb) = (node(&|| field.clone(), a)?, node(&|| field.clone(), b)?);
        let l = *link_index.get(&(na, nb)).ok_or_else(|| invalid(field, "no such link"))?;
        captured.push((l, format!("{a}->{b}")));
    }
    let n_links = links.len();
    let links = room.adopt(links);
    let mut net = Network::new(sc.nodes.clone(), links, routes, taps, sc.stop_ns.map(Time::from_ns));
    if !captured.is_empty() {
        let dir = sc.trace.pcap_dir.as_deref().ok_or_else(|| invalid("trace.pcap_dir".into(), "captures need a directory"))?;
        let caps = Captures::create(std::path::Path::new(dir), n_links, &captured, &sc.nodes)
            .map_err(|e| invalid("trace.pcap_dir".into(), format!("cannot write captures into '{dir}': {e}")))?;
        net.set_captures(caps);
    }
    for p in &mut tcp.profiles {
        p.heads = (net.route_head(p.data_route), net.route_head(p.ack_route));
        for (data, ack, heads) in &mut p.more {
            *heads = (net.route_head(*data), net.route_head(*ack));
        }
    }
    for i in 0..sc.apps.len() {
        if sc.app_tcp(i)?.ssthresh_bdp {
            let p = &mut tcp.profiles[i];
            let bdp = net.path_bdp(p.data_route, p.ack_route, u64::from(p.cfg.mss + p.cfg.header), u64::from(p.cfg.header));
            p.cfg.initial_ssthresh = bdp.max(2 * u64::from(p.cfg.mss));
        }
    }
    net.wire_ports();
    // A link that hands a packet on fills in the next link's arrival ahead
    // of time; a run that stops when its applications finish has no stop
    // time to hold such packets back at, so there every arrival is an event.
    if sc.advance_links && sc.until.is_empty() {
        net.enable_advancing();
    }
    Ok(Parts { net, tcp, apps, tracer })
}

/// Whether a route of the applications a loss rule matches (`class`: one
/// application, or all) carries packets of its kind over `link`: data,
/// SYN-ACKs and closes go over an application's data routes (from each of
/// its servers), ACKs, SYNs and requests over its ACK routes.
fn rule_reaches(link: u32, class: Option<u32>, kind: Option<PacketKind>, profiles: &[Profile], routes: &Routes) -> bool {
    let (data, acks) = match kind {
        None => (true, true),
        Some(PacketKind::Data | PacketKind::SynAck | PacketKind::Close) => (true, false),
        Some(PacketKind::Ack | PacketKind::Syn | PacketKind::ClientData) => (false, true),
    };
    let crosses = |r: u32| routes.get(r).contains(&link);
    let reaches = |p: &Profile| {
        (data && (crosses(p.data_route) || p.more.iter().any(|m| crosses(m.0)))) || (acks && (crosses(p.ack_route) || p.more.iter().any(|m| crosses(m.1))))
    };
    match class {
        Some(c) => profiles.get(c as usize).is_some_and(reaches),
        None => profiles.iter().any(reaches),
    }
}

fn loss_rule(
    seed: u64,
    field: &str,
    l: &LossSpec,
    nodes: &HashMap<&str, u32>,
    links: &HashMap<(u32, u32), u32>,
    apps: &HashMap<&str, u32>,
) -> Result<(u32, LossRule)> {
    let inv = |f: &str, m: String| invalid(format!("{field}.{f}"), m);
    let a = *nodes.get(l.from.as_str()).ok_or_else(|| inv("link", format!("unknown node '{}'", l.from)))?;
    let b = *nodes.get(l.to.as_str()).ok_or_else(|| inv("link", format!("unknown node '{}'", l.to)))?;
    let link = *links.get(&(a, b)).ok_or_else(|| inv("link", format!("no link {}->{}", l.from, l.to)))?;
    let class = match &l.app {
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
    Ok((link, LossRule { class, kind, nth, next: 0, seen: 0, rate: l.rate, rng: RngStream::new(seed, &format!("loss/{field}")) }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Time;

    #[test]
    fn each_connection_keeps_the_heads_of_its_routes_from_every_server() {
        // s0 and s1 -> r0 -> r1 -> k0; links 0-7 as listed (each way in turn).
        let links = crate::testkit::links(&[("s0", "r0"), ("r0", "s0"), ("s1", "r0"), ("r0", "s1"), ("r0", "r1"), ("r1", "r0"), ("r1", "k0"), ("k0", "r1")]);
        let tcp = crate::testkit::TCP;
        let text = format!(
            r#"{{"seed": 1, "stop_ns": 1000000000, "nodes": ["s0", "s1", "r0", "r1", "k0"], "links": [{links}],
            "apps": [{{"name": "b", "kind": "burst", "src": "s0", "dst": "k0", "start_ns": 0, "size_bytes": 40000, "request_bytes": 0,
                       "flows": 2, "extra_src": ["s1"], "tcp": {tcp}}}]}}"#
        );
        let sc = Scenario::from_json(&text).expect("a valid scenario");
        let mut parts = build(&sc).expect("it builds");
        let head = |first, hops| RouteHead { first, hops };
        // From s0: data over links 0, 4, 6; ACKs over 7, 5, 1. From s1: data over 2, 4, 6; ACKs over 7, 5, 3.
        let from_s0 = (head(0, 3), head(7, 3));
        let from_s1 = (head(2, 3), head(7, 3));
        let p = &parts.tcp.profiles[0];
        assert_eq!(p.heads, from_s0);
        assert_eq!(p.more[0].2, from_s1);
        for (server, want) in [(0, from_s0), (1, from_s1)] {
            let c = parts.tcp.create(0, server, Some(20_000), 0, Time::ZERO);
            let conn = &parts.tcp.conns[c as usize];
            assert_eq!(conn.heads, want, "server {server}");
            let (data, ack) = conn.routes();
            assert_eq!((parts.net.route_head(data), parts.net.route_head(ack)), want, "server {server}: the network's own routes");
        }
    }
}

#[cfg(test)]
mod loss_rule_tests {
    use super::*;

    /// s -> r -> k with application `a` (data s to k) and, over the same
    /// links, `b` from k to s (data k to s), and the loss rules `losses`.
    fn built(losses: &str) -> Result<Parts> {
        let links = crate::testkit::links(&[("s", "r"), ("r", "s"), ("r", "k"), ("k", "r")]);
        let tcp = crate::testkit::TCP;
        let app = |name: &str, src: &str, dst: &str| {
            format!(r#"{{"name": "{name}", "kind": "bulk", "src": "{src}", "dst": "{dst}", "start_ns": 0, "size_bytes": 4000, "request_bytes": 0, "tcp": {tcp}}}"#)
        };
        let (a, b) = (app("a", "s", "k"), app("b", "k", "s"));
        let text = format!(r#"{{"seed": 1, "stop_ns": 1000000000, "nodes": ["s", "r", "k"], "links": [{links}], "apps": [{a}, {b}], "losses": [{losses}]}}"#);
        build(&Scenario::from_json(&text).expect("a valid scenario"))
    }

    fn rule(from: &str, to: &str, app: Option<&str>, kind: Option<&str>) -> String {
        let q = |v: Option<&str>| v.map_or("null".to_string(), |s| format!("\"{s}\""));
        format!(r#"{{"from": "{from}", "to": "{to}", "app": {}, "kind": {}, "nth": [1]}}"#, q(app), q(kind))
    }

    #[test]
    fn a_rule_no_route_of_its_packets_crosses_is_refused() {
        // a's data and SYN-ACKs go s->r->k, its ACKs, SYNs and requests k->r->s.
        for (from, to, kind) in [("s", "r", "data"), ("r", "k", "synack"), ("s", "r", "close"), ("k", "r", "ack"), ("r", "s", "syn"), ("k", "r", "request")] {
            assert!(built(&rule(from, to, Some("a"), Some(kind))).is_ok(), "{from}->{to} {kind}");
            let err = built(&rule(to, from, Some("a"), Some(kind))).err().expect("refused");
            assert_eq!(err.field(), Some("losses[0].link"));
            assert_eq!(
                err.message(),
                format!("no route of application 'a' carries '{kind}' packets over {to}->{from}, so the rule would drop nothing (data, SYN-ACKs and closes go from an application's src to its dst; ACKs, SYNs and requests back)")
            );
        }
        // Without an application, any application's route will do: b's data goes k->r->s.
        assert!(built(&rule("r", "s", None, Some("data"))).is_ok());
        // Without a kind, either direction of the application's will do.
        assert!(built(&rule("r", "s", Some("a"), None)).is_ok());
        // The rule is named by its place among the rules.
        let two = format!("{}, {}", rule("s", "r", None, Some("data")), rule("r", "s", Some("a"), Some("data")));
        let err = built(&two).err().expect("refused");
        assert_eq!(err.field(), Some("losses[1].link"));
        assert!(err.message().starts_with("no route of application 'a' carries 'data' packets over r->s"), "{}", err.message());
    }

    #[test]
    fn an_extra_servers_routes_count_for_its_application() {
        // s0 and s1 -> r -> k; the burst's second flow comes from s1.
        let links = crate::testkit::links(&[("s0", "r"), ("r", "s0"), ("s1", "r"), ("r", "s1"), ("r", "k"), ("k", "r")]);
        let tcp = crate::testkit::TCP;
        let text = |from: &str, to: &str| {
            format!(
                r#"{{"seed": 1, "stop_ns": 1000000000, "nodes": ["s0", "s1", "r", "k"], "links": [{links}],
                "apps": [{{"name": "b", "kind": "burst", "src": "s0", "dst": "k", "start_ns": 0, "size_bytes": 8000, "request_bytes": 0, "flows": 2, "extra_src": ["s1"], "tcp": {tcp}}}],
                "losses": [{{"from": "{from}", "to": "{to}", "app": null, "kind": "data", "nth": [1]}}]}}"#
            )
        };
        let parts = |from, to| build(&Scenario::from_json(&text(from, to)).expect("a valid scenario"));
        assert!(parts("s1", "r").is_ok());
        assert_eq!(parts("r", "s1").err().expect("refused").field(), Some("losses[0].link"));
    }
}

#[cfg(test)]
mod timer_link_tests {
    use super::*;
    use crate::tcp::Timer;
    use crate::time::Time;

    #[test]
    fn a_timer_names_the_first_link_of_the_route_its_send_takes() {
        // s -> r -> k: data over links 0, 2; ACKs over 3, 1.
        let sc = crate::testkit::line_srk(r#"{"name": "b", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 40000, "request_bytes": 0, "tcp": {tcp}}"#);
        let mut parts = build(&sc).expect("it builds");
        let c = parts.tcp.create(0, 0, Some(40_000), 0, Time::ZERO);
        let conn = &parts.tcp.conns[c as usize];
        // The server's timers send data, the client's send ACKs or requests.
        for (timer, link) in [(Timer::Rto, 0), (Timer::SynAck, 0), (Timer::Release, 0), (Timer::DelAck, 3), (Timer::Syn, 3), (Timer::Message, 3)] {
            assert_eq!(conn.timer_link(timer), link, "{timer:?}");
        }
    }
}
