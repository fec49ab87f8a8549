//! The result tables of a finished run, built from the parts that hold the state.

use super::{EngineRow, FlowRow, LinkRow, PacketRow, PortRow, Results, Tracer};
use crate::app::Apps;
use crate::net::tap::LOG_EVENTS;
use crate::net::Network;
use crate::tcp::Endpoints;
use crate::time::{Dur, Time};

/// The tables of a run that ended at `end` after `events` events; `wall_seconds` is the caller's measurement.
pub fn build(net: &Network, tcp: &Endpoints, apps: &Apps, tracer: &Tracer, end: Time, events: u64, wall_seconds: f64) -> Results {
    let name = |n: u32| net.nodes[n as usize].clone();
    let flows = tcp
        .conns
        .iter()
        .map(|c| {
            let app = &apps.apps[c.owner as usize];
            let done = c.receiver.done_at();
            let delivered = c.receiver.delivered();
            let span = done.unwrap_or(end).saturating_since(c.start).as_secs_f64();
            let st = &c.sender.stats;
            FlowRow {
                id: u64::from(c.id),
                app: app.name.clone(),
                page: apps.page_of(c.tag),
                // The server: a burst's transfers may come from several.
                src: name(net.route_ends(c.routes().0).0),
                dst: name(app.dst),
                cc: c.sender.cc.name().to_string(),
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
        })
        .collect();
    let links = net
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
    let packets = net
        .log_until(end)
        .map(|r| PacketRow {
            t: r.t.as_secs_f64(),
            link: net.link_name(r.link),
            event: LOG_EVENTS[r.event as usize],
            flow: u64::from(r.flow),
            app: apps.apps[net.flow_class(r.flow) as usize].name.clone(),
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
        traces: tracer.rows.clone(),
        web100: tracer.web100_rows.clone(),
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
