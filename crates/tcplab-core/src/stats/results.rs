//! The result tables of a finished run, built from the parts that hold the state.

use super::retired::Finished;
use super::{EngineRow, FlowRow, LinkRow, PacketRow, PortRow, Results, TraceRow, Web100Row};
use crate::app::Apps;
use crate::net::tap::LOG_EVENTS;
use crate::net::Network;
use crate::tcp::{Connection, Endpoints};
use crate::time::{Dur, Time};
use std::sync::Arc;

/// Name `i` of `names`, made by `make` the first time it is asked for.
fn shared(names: &mut Vec<Option<Arc<str>>>, i: usize, make: impl FnOnce() -> String) -> Arc<str> {
    if names.len() <= i {
        names.resize(i + 1, None);
    }
    names[i].get_or_insert_with(|| make().into()).clone()
}

/// The names a run's flow rows share: each host's and application's made
/// once, on first use.
#[derive(Default, Clone)]
pub struct FlowNames {
    nodes: Vec<Option<Arc<str>>>,
    apps: Vec<Option<Arc<str>>>,
}

impl FlowNames {
    /// `row` with its names: each host's and application's made on first
    /// use and shared by the rows after.
    pub fn name(&mut self, row: FlowRow<u32>, net: &Network, apps: &Apps) -> FlowRow {
        let FlowNames { nodes, apps: app_names } = self;
        row.named(
            |a| shared(app_names, a as usize, || apps.apps[a as usize].name.clone()),
            |n| shared(nodes, n as usize, || net.nodes[n as usize].clone()),
        )
    }
}

/// The flow row of connection `c`, flow number `flow`, in a run at `end`,
/// its names as numbers (its application's, and its hosts'). A completed
/// transfer's row does not depend on `end`.
pub fn flow_row(c: &Connection, flow: u32, net: &Network, tcp: &Endpoints, apps: &Apps, end: Time) -> FlowRow<u32> {
    let app = &apps.apps[c.owner as usize];
    let done = c.receiver.done_at();
    let delivered = c.receiver.delivered();
    let span = done.unwrap_or(end).saturating_since(c.start).as_secs_f64();
    let st = &c.sender.stats;
    // The server: a burst's transfers may come from several.
    let src = net.route_ends(c.routes().0).0;
    FlowRow {
        id: u64::from(flow),
        app: c.owner,
        page: apps.page_of(c.tag),
        src,
        dst: app.dst,
        cc: c.sender.cc.name(),
        iw: tcp.profiles[c.owner as usize].cfg.iw_segments(),
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
        send_stalls: st.send_stalls,
        rtt_samples: c.sender.rtt.samples(),
        srtt_s: c.sender.rtt.srtt().map(Dur::as_secs_f64),
        syn_sent: u64::from(c.syn_sent()),
        synack_sent: u64::from(c.synack_sent()),
        closed: c.closed(),
        aborted: c.aborted(),
        completed: done.is_some(),
    }
}

/// The rows a run keeps as it goes, handed to [`build`]: the caller's own,
/// or copies of them.
pub struct Kept<'a> {
    pub traces: Vec<TraceRow>,
    pub web100: Vec<Web100Row>,
    /// The rows of the connections recycled during the run
    /// ([`Endpoints::recycle`]). Where some went into columns as the run
    /// went ([`super::retired`]), the results' rows leave out their flows,
    /// those numbered below `retired.in_columns`.
    pub retired: Finished,
    /// The names the named rows share.
    pub names: &'a FlowNames,
}

/// The tables of a run that ended at `end` after `events` events; `wall_seconds` is the caller's measurement.
pub fn build(net: &Network, tcp: &Endpoints, apps: &Apps, kept: Kept, end: Time, events: u64, wall_seconds: f64) -> Results {
    let name = |n: u32| net.nodes[n as usize].clone();
    let Kept { traces, web100, retired: Finished { in_columns, named, numbered }, names } = kept;
    let flows = || -> Vec<FlowRow> {
        let mut names = names.clone();
        let recycled = !named.is_empty() || !numbered.is_empty() || in_columns > 0;
        let mut rows = named;
        rows.reserve_exact(numbered.len() + tcp.conns.len());
        named_in_turn(numbered, &mut rows, |r| names.name(r, net, apps));
        rows.extend(tcp.live().map(|(c, flow)| names.name(flow_row(c, flow, net, tcp, apps, end), net, apps)));
        if recycled {
            // Retired rows came in the order their connections went quiet,
            // and the live ones in the order of their slots.
            put_in_id_order(&mut rows, in_columns as u64);
        }
        rows
    };
    let links = || -> Vec<LinkRow> {
        net.links
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
            .collect()
    };
    let (flows, links) = both(flows, links, tcp.conns.len() + net.links.len() >= PARALLEL_ROWS);
    // Each name made once, its rows sharing it.
    let mut link_names: Vec<Option<Arc<str>>> = Vec::new();
    let mut app_names: Vec<Option<Arc<str>>> = Vec::new();
    let packets = net
        .log_until(end)
        .map(|r| PacketRow {
            t: r.t.as_secs_f64(),
            link: shared(&mut link_names, r.link as usize, || net.link_name(r.link)),
            event: LOG_EVENTS[r.event as usize],
            flow: u64::from(r.flow),
            app: shared(&mut app_names, net.flow_class(r.flow) as usize, || apps.apps[net.flow_class(r.flow) as usize].name.clone()),
            kind: r.kind.name(),
            seq: r.seq,
            len: r.len,
            retx: r.retx,
        })
        .collect();
    Results {
        flows,
        links,
        pages: apps.page_rows(),
        traces,
        web100,
        ports: net
            .links
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.port.as_ref().map(|p| (i, p)))
            .map(|(i, p)| {
                let used: Vec<u32> = p.vc_max.iter().copied().filter(|&m| m > 0).collect();
                PortRow {
                    link: net.link_name(i as u32),
                    policy: p.config().policy.name(),
                    buffer_cells: p.config().buffer_cells,
                    counters: p.counters.clone(),
                    vc_max_cells: used.iter().copied().max().unwrap_or(0),
                    vc_max_mean: if used.is_empty() { 0.0 } else { used.iter().map(|&m| f64::from(m)).sum::<f64>() / used.len() as f64 },
                }
            })
            .collect(),
        packets,
        captures: Vec::new(),
        engine: EngineRow {
            events,
            sim_seconds: end.as_secs_f64(),
            wall_seconds,
            setup_seconds: 0.0,
            results_seconds: 0.0,
            packets_created: net.packets_created(),
            packets_delivered: net.delivered,
            packets_dropped: net.dropped,
            packets_in_network_end: net.packets_live(),
            packet_pool_peak: net.pool_peak(),
        },
    }
}

/// Append `rows`, named by `name`, to `named` (in any order): a chunk at a
/// time, each chunk's memory given back before the next (a run whose
/// helper could not start keeps its millions of rows numbered, and they
/// would otherwise be in memory twice over).
fn named_in_turn(mut rows: Vec<FlowRow<u32>>, named: &mut Vec<FlowRow>, mut name: impl FnMut(FlowRow<u32>) -> FlowRow) {
    const CHUNK: usize = 1 << 16;
    while !rows.is_empty() {
        let from = rows.len().saturating_sub(CHUNK);
        named.extend(rows.drain(from..).map(&mut name));
        rows.shrink_to_fit();
    }
}

/// Put rows whose ids are `first`, `first + 1`, ... in some order in the
/// order of their ids: each row moves at most once to its place (rows are
/// large, and nearly in order).
fn put_in_id_order<S>(rows: &mut [FlowRow<S>], first: u64) {
    let at = |r: &FlowRow<S>| (r.id - first) as usize;
    for i in 0..rows.len() {
        while at(&rows[i]) != i {
            let to = at(&rows[i]);
            debug_assert_ne!(at(&rows[to]), to, "flow {} twice", rows[to].id);
            rows.swap(i, to);
        }
    }
}

/// From this many flow and link rows on, the two tables are built side by
/// side: at 100,000 flows (400,000 links) each takes about a tenth of a
/// second. A table of this many rows goes into columns in two halves side by
/// side (`Columns::of_halves`).
pub(crate) const PARALLEL_ROWS: usize = 100_000;

/// `a()` and `b()`, the second on a helper thread when `parallel` (and a
/// thread can be started): the results are the same either way.
pub(crate) fn both<A, B: Send>(a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send, parallel: bool) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    // The helper takes `b` from here; where it cannot start, `b` is still here.
    let slot = std::sync::Mutex::new(Some(b));
    let take = || slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new().name("tcplab-results".into()).spawn_scoped(s, || take().map(|b| b()));
        let x = a();
        let y = match helper {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => None,
        };
        (x, y.unwrap_or_else(|| take().expect("b runs once")()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_name() -> Option<String> {
        std::thread::current().name().map(str::to_owned)
    }

    #[test]
    fn both_gives_each_result_in_its_place_and_runs_the_second_on_a_helper_when_parallel() {
        let me = thread_name();
        assert_eq!(both(|| (1, thread_name()), || ("b", thread_name()), true), ((1, me.clone()), ("b", Some("tcplab-results".to_owned()))));
        assert_eq!(both(|| (1, thread_name()), || ("b", thread_name()), false), ((1, me.clone()), ("b", me)));
    }

    #[test]
    #[should_panic(expected = "from the helper")]
    fn a_panic_on_the_helper_reaches_the_caller() {
        both(|| 1, || -> u8 { panic!("from the helper") }, true);
    }

    #[test]
    fn rows_numbered_in_any_order_are_put_in_the_order_of_their_numbers() {
        let sc = crate::testkit::line_srk(r#"{"name": "bulk", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 3000, "request_bytes": 0, "tcp": {tcp}}"#);
        let mut sim = crate::Simulator::new(&sc).expect("it builds");
        sim.run();
        let r = sim.results(0.0);
        let order = [5u64, 0, 7, 2, 1, 3, 6, 4];
        for first in [0, 3] {
            let mut rows: Vec<FlowRow> = order.iter().map(|&id| FlowRow { id: first + id, bytes_delivered: 10 * id, ..r.flows[0].clone() }).collect();
            put_in_id_order(&mut rows, first);
            assert_eq!(rows.iter().map(|r| (r.id, r.bytes_delivered)).collect::<Vec<_>>(), (0..8).map(|i| (first + i, 10 * i)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_traced_run_s_columns_hold_what_its_rows_do() {
        // Two applications through one logged link, each traced (on change and
        // every 10 ms, with web100 rows), one of them losing a packet.
        let mut sc = crate::testkit::line_srk(
            r#"{"name": "a", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 30000, "request_bytes": 0, "tcp": {tcp}},
               {"name": "b", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 1000000, "size_bytes": 20000, "request_bytes": 0, "tcp": {tcp}}"#,
        );
        sc.trace.interval_ns = Some(10_000_000);
        sc.trace.on_change = true;
        sc.trace.web100 = true;
        sc.trace.links = vec![("r".into(), "k".into())];
        let mut sim = crate::Simulator::new(&sc).expect("it builds");
        sim.run();
        let r = sim.results(0.0);
        assert!(r.traces.len() > 20 && r.web100.len() > 5 && r.packets.len() > 40, "{} {} {}", r.traces.len(), r.web100.len(), r.packets.len());
        super::super::check_columns(&r).expect("columns hold the rows");
        let mut blobs = Vec::new();
        let packed: serde_json::Value = serde_json::from_str(&super::super::to_json_columns(&r, Some(&mut blobs)).expect("columns")).expect("JSON");
        for (table, col, levels) in [("packets", "link", vec!["r->k"]), ("packets", "app", vec!["a", "b"]), ("traces", "app", vec!["a", "b"])] {
            assert_eq!(packed[table][col]["levels"], serde_json::json!(levels), "{table}.{col}");
        }
        // The results with the traces moved out are the same; a second time, without them.
        assert_eq!(format!("{:?}", sim.take_results(0.0)), format!("{r:?}"));
        let again = sim.take_results(0.0);
        assert!(again.traces.is_empty() && again.web100.is_empty() && again.packets.len() == r.packets.len());
    }

    #[test]
    fn a_large_run_s_columns_built_side_by_side_hold_what_its_rows_do() {
        // A small run's rows, repeated past the threshold, so that
        // `to_json_columns` builds the flows' and links' columns on two threads.
        let sc = crate::testkit::line_srk(r#"{"name": "a", "kind": "bulk", "src": "s", "dst": "k", "start_ns": 0, "size_bytes": 30000, "request_bytes": 0, "tcp": {tcp}}"#);
        let mut sim = crate::Simulator::new(&sc).expect("it builds");
        sim.run();
        let mut r = sim.results(0.0);
        let (flow, links) = (r.flows[0].clone(), r.links.clone());
        r.flows = (0..PARALLEL_ROWS as u64 / 2).map(|i| FlowRow { id: i, bytes_delivered: i % 7, ..flow.clone() }).collect();
        r.links = (0..PARALLEL_ROWS / 2).map(|i| LinkRow { id: i as u64, ..links[i % links.len()].clone() }).collect();
        let text = super::super::to_json_columns(&r, None).expect("columns");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        for (table, rows) in [("flows", serde_json::to_value(&r.flows).unwrap()), ("links", serde_json::to_value(&r.links).unwrap())] {
            let rows = rows.as_array().unwrap();
            assert_eq!(rows.len(), PARALLEL_ROWS / 2);
            for (i, row) in rows.iter().enumerate() {
                for (k, x) in row.as_object().unwrap() {
                    assert_eq!(&v[table][k][i], x, "{table}.{k}[{i}]");
                }
            }
        }
        // With blobs: the columns of numbers hold the same values as bytes, the
        // columns of strings the same strings as codes.
        super::super::check_columns(&r).expect("columns hold the rows");
        let mut blobs = Vec::new();
        let packed: serde_json::Value = serde_json::from_str(&super::super::to_json_columns(&r, Some(&mut blobs)).expect("columns")).expect("JSON");
        let dtypes: Vec<&str> = ["flows", "links"].iter().flat_map(|t| packed[t].as_object().unwrap().values()).filter_map(|c| c["dtype"].as_str()).collect();
        assert_eq!(dtypes.len(), blobs.len());
        assert!(dtypes.iter().filter(|&&d| d == "<i8" || d == "<f8").count() > 20, "{dtypes:?}: columns of numbers");
        // completed and aborted of the flows.
        assert!(dtypes.iter().filter(|&&d| d == "|u1").count() >= 2, "{dtypes:?}: columns of booleans");
        // src, dst, app, cc... of the flows, src and dst of the links.
        assert!(dtypes.iter().filter(|&&d| d == "<u4").count() >= 6, "{dtypes:?}: columns of strings as codes");
    }
}
