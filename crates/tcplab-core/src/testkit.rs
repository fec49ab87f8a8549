//! Small scenarios in the core's JSON form, for unit tests.

/// Links of 10 Mb/s, 1 ms and a 10-packet drop-tail queue, one per
/// (from, to) pair, as a JSON list's items.
pub fn links(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(from, to)| {
            format!(r#"{{"from": "{from}", "to": "{to}", "rate_bps": 10000000, "delay_ns": 1000000, "queue": {{"type": "droptail", "limit_pkts": 10, "limit_bytes": null}}}}"#)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reno with SACK, no handshake and no delayed ACKs: an application's `tcp` object.
pub const TCP: &str = r#"{"cc": "reno", "mss": 1460, "header": 40, "iw_bytes": 1460,
    "max_window_bytes": 65536, "initial_ssthresh_bytes": null, "ssthresh_bdp": false, "rto_initial_ns": 1000000000,
    "rto_min_ns": 1000000000, "rto_max_ns": 60000000000, "granularity_ns": 1000000, "dupack_threshold": 3,
    "max_backoff": 6, "abc_limit": 2, "delayed_ack": false, "delack_timeout_ns": 200000000, "delack_segments": 2,
    "limited_transmit": false, "idle_restart": true, "sack_blocks": 3, "handshake": false, "byte_counting": true}"#;

/// A scenario over s -> r -> k (links 0: s->r, 1: r->s, 2: r->k, 3: k->r),
/// stopping at 1 s, with `apps`: a JSON list's items, each of which may
/// write `{tcp}` for [`TCP`].
pub fn line_srk(apps: &str) -> crate::scenario::Scenario {
    let links = links(&[("s", "r"), ("r", "s"), ("r", "k"), ("k", "r")]);
    let apps = apps.replace("{tcp}", TCP);
    let text = format!(r#"{{"seed": 1, "stop_ns": 1000000000, "nodes": ["s", "r", "k"], "links": [{links}], "apps": [{apps}]}}"#);
    crate::scenario::Scenario::from_json(&text).expect("a valid scenario")
}
