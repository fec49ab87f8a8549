//! Scenario JSON that builds is run, briefly, twice: every run keeps the
//! invariants of `stats::invariants::check` (those of
//! `tests/test_invariants.py`: conservation of packets at each link and in
//! the whole network, queue and utilization bounds, no transfer receiving
//! more than it asked for), its result columns hold what its rows do
//! (`stats::check_columns`), and the two runs give the same results: the
//! second with connections never used again (`recycle_connections`), which
//! changes no result.
//!
//! To keep an input quick, only small topologies of links up to 100 Mb/s
//! run, for at most 50 ms of simulated time, and nothing is written to
//! disk (no packet capture).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcplab_core::scenario::Scenario;
use tcplab_core::Simulator;

const MAX_LINKS: usize = 48;
const MAX_APPS: usize = 24;
const MAX_RATE_BPS: u64 = 100_000_000;
const MAX_STOP_NS: u64 = 50_000_000;

fn run(sc: &Scenario) -> Option<String> {
    let mut sim = Simulator::new(sc).ok()?;
    sim.run();
    let mut r = sim.results(0.0);
    if let Err(broken) = tcplab_core::stats::invariants::check(&r) {
        panic!("{broken}");
    }
    if let Err(differ) = tcplab_core::stats::check_columns(&r) {
        panic!("{differ}");
    }
    // What measures the machine, not the run.
    r.engine.wall_seconds = 0.0;
    r.engine.setup_seconds = 0.0;
    r.engine.results_seconds = 0.0;
    Some(format!("{r:?}"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut sc) = Scenario::from_json(text) else { return };
    if sc.link_columns.is_some() || sc.app_columns.is_some() || sc.links.len() > MAX_LINKS || sc.apps.len() > MAX_APPS {
        return;
    }
    if sc.links.iter().any(|l| l.rate_bps > MAX_RATE_BPS) {
        return;
    }
    sc.stop_ns = Some(sc.stop_ns.map_or(MAX_STOP_NS, |s| s.min(MAX_STOP_NS)));
    sc.trace.pcap.clear();
    sc.trace.pcap_dir = None;
    let Some(first) = run(&sc) else { return };
    sc.recycle_connections = Some(false);
    let second = run(&sc).expect("it built once");
    assert!(first == second, "two runs of one scenario differ");
});
