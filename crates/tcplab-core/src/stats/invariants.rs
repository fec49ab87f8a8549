//! What every run's results keep, whatever the scenario: the checks of
//! `tests/test_invariants.py`, in the core, for the `scenario_run` fuzz
//! target and the tests.

use super::Results;

/// The first invariant `r` breaks, described, or `Ok`:
/// - each link's arrivals are its departures, drops and backlog at the
///   end, and its injected losses are among its drops;
/// - every packet made is delivered, dropped, or still inside (queued,
///   in service or propagating), and the drops are the links' drops;
/// - utilization is a fraction, and no queue's average exceeds its maximum;
/// - no transfer receives more than it asked for, a completed one exactly
///   that, and none retransmits more packets than it sent.
pub fn check(r: &Results) -> Result<(), String> {
    let (mut inside, mut drops) = (0, 0);
    for l in &r.links {
        let at = || format!("link {} ({} -> {})", l.id, l.src, l.dst);
        if l.arrivals != l.departures + l.drops + l.backlog_end {
            return Err(format!("{}: {} arrivals, but {} departures + {} drops + {} queued at the end", at(), l.arrivals, l.departures, l.drops, l.backlog_end));
        }
        if l.loss_drops > l.drops {
            return Err(format!("{}: {} injected losses among {} drops", at(), l.loss_drops, l.drops));
        }
        if !(0.0..=1.0 + 1e-12).contains(&l.utilization) {
            return Err(format!("{}: utilization {}", at(), l.utilization));
        }
        if l.queue_avg_pkts > l.queue_max_pkts as f64 + 1e-9 {
            return Err(format!("{}: average queue {} above its maximum {}", at(), l.queue_avg_pkts, l.queue_max_pkts));
        }
        inside += l.backlog_end + l.propagating_end;
        drops += l.drops;
    }
    let e = &r.engine;
    if e.packets_in_network_end != inside {
        return Err(format!("{} packets inside at the end, but the links hold {inside}", e.packets_in_network_end));
    }
    if e.packets_dropped != drops {
        return Err(format!("{} packets dropped, but the links dropped {drops}", e.packets_dropped));
    }
    if e.packets_created != e.packets_delivered + e.packets_dropped + inside {
        return Err(format!("{} packets made, but {} delivered + {} dropped + {inside} inside", e.packets_created, e.packets_delivered, e.packets_dropped));
    }
    for f in &r.flows {
        if let Some(bytes) = f.bytes {
            if f.bytes_delivered > bytes || (f.completed && f.bytes_delivered != bytes) {
                return Err(format!("flow {}: {} bytes delivered of {bytes} (completed: {})", f.id, f.bytes_delivered, f.completed));
            }
        }
        if f.retx_pkts > f.data_pkts {
            return Err(format!("flow {}: {} retransmissions of {} data packets", f.id, f.retx_pkts, f.data_pkts));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulator;

    /// Four transfers into a 10-packet queue, one of them lossy by
    /// injection, stopped while packets are still inside.
    fn lossy() -> Results {
        let app = |i: u32, size: &str| {
            format!(r#"{{"name": "a{i}", "kind": "bulk", "src": "s", "dst": "k", "start_ns": {}, "size_bytes": {size}, "request_bytes": 0, "tcp": {{tcp}}}}"#, i * 1_000_000)
        };
        let apps = [app(0, "null"), app(1, "200000"), app(2, "30000"), app(3, "null")].join(", ");
        let mut sc = crate::testkit::line_srk(&apps);
        sc.links[2].rate_bps = 2_000_000;
        sc.stop_ns = Some(4_300_000_000);
        sc.losses = serde_json::from_str(r#"[{"from": "r", "to": "k", "app": "a3", "kind": null, "nth": [5, 9], "rate": null}]"#).expect("a loss");
        let mut sim = Simulator::new(&sc).expect("it builds");
        sim.run();
        sim.results(0.0)
    }

    #[test]
    fn a_lossy_run_keeps_every_invariant() {
        let r = lossy();
        let e = &r.engine;
        assert!(e.packets_dropped > 2, "the queue drops too: {e:?}");
        assert!(e.packets_in_network_end > 0, "stopped with packets inside: {e:?}");
        assert!(r.flows.iter().any(|f| f.completed), "a transfer completes");
        assert!(r.links.iter().any(|l| l.loss_drops == 2));
        assert_eq!(check(&r), Ok(()));
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let r = lossy();
        let broken = |f: &dyn Fn(&mut Results)| {
            let mut b = r.clone();
            f(&mut b);
            check(&b).expect_err("broken")
        };
        assert!(broken(&|b| b.links[2].departures += 1).starts_with("link 2 (r -> k): "));
        assert!(broken(&|b| b.links[2].loss_drops = b.links[2].drops + 1).contains("injected losses"));
        assert!(broken(&|b| b.links[0].utilization = 1.5).contains("utilization 1.5"));
        assert!(broken(&|b| b.engine.packets_created += 1).contains("packets made"));
        assert!(broken(&|b| b.engine.packets_in_network_end += 1).contains("inside at the end"));
        let done = r.flows.iter().position(|f| f.completed).expect("a completed flow");
        assert!(broken(&|b| b.flows[done].bytes_delivered -= 1).contains("bytes delivered"));
        assert!(broken(&|b| b.flows[0].retx_pkts = b.flows[0].data_pkts + 1).contains("retransmissions"));
    }
}
