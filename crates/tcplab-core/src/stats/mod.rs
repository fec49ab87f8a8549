//! Instrumentation and results: the [`Tracer`] (periodic and on-change
//! connection traces, free when off), and the result tables built at the
//! end of a run ([`results::build`]): one row per transfer, link direction,
//! trace sample and logged packet, the applications' tables, and the
//! engine's counters.

pub mod columns;
pub mod invariants;
pub mod results;
pub mod retired;
pub mod trace;

pub use trace::Tracer;

use serde::Serialize;
use std::sync::Arc;

/// One transfer (one TCP connection). Its names (`app`, `src`, `dst`) are
/// strings, or as a run keeps the rows of finished connections, numbers
/// (`FlowRow<u32>`: the application's and the hosts' indices), named at the
/// end ([`FlowRow::named`]).
#[derive(Clone, Debug, Serialize)]
pub struct FlowRow<S = Arc<str>> {
    pub id: u64,
    pub app: S,
    /// The application's grouping of this transfer (its page), if any.
    pub page: Option<u64>,
    pub src: S,
    pub dst: S,
    pub cc: &'static str,
    /// Initial window, segments (fractional when given in bytes).
    pub iw: f64,
    /// Bytes requested (`None`: unbounded).
    pub bytes: Option<u64>,
    /// Bytes delivered in order to the receiver by the end of the run.
    pub bytes_delivered: u64,
    pub start_s: f64,
    /// When the receiver had the last byte (`None`: not completed).
    pub end_s: Option<f64>,
    pub fct_s: Option<f64>,
    /// Delivered bits per second, over the completion time or, for a
    /// transfer still running, from its start to the end of the run.
    pub goodput_bps: f64,
    pub data_pkts: u64,
    /// Retransmitted data packets: `retx_fast_pkts + retx_timeout_pkts`.
    pub retx_pkts: u64,
    pub retx_fast_pkts: u64,
    pub retx_timeout_pkts: u64,
    pub timeouts: u64,
    pub fast_retx: u64,
    pub dupacks: u64,
    pub sack_blocks: u64,
    pub ss_entries: u64,
    pub ca_entries: u64,
    /// Times the sender became blocked by the receiver's window.
    pub rwnd_stalls: u64,
    /// Segments refused by the sending host's full interface queue (local congestion).
    pub send_stalls: u64,
    pub rtt_samples: u64,
    pub srtt_s: Option<f64>,
    /// SYNs sent by the client (0 without a handshake).
    pub syn_sent: u64,
    pub synack_sent: u64,
    /// The connection was closed by both sides (handshake only).
    pub closed: bool,
    /// The connection gave up after `max_retries` unanswered retransmissions.
    pub aborted: bool,
    pub completed: bool,
}

impl<S> FlowRow<S> {
    /// The same row with its application's name `app(self.app)` and its
    /// hosts' `node(self.src)` and `node(self.dst)`.
    pub fn named<T>(self, mut app: impl FnMut(S) -> T, mut node: impl FnMut(S) -> T) -> FlowRow<T> {
        let FlowRow {
            id, app: a, page, src, dst, cc, iw, bytes, bytes_delivered, start_s, end_s, fct_s, goodput_bps, data_pkts, retx_pkts,
            retx_fast_pkts, retx_timeout_pkts, timeouts, fast_retx, dupacks, sack_blocks, ss_entries, ca_entries, rwnd_stalls,
            send_stalls, rtt_samples, srtt_s, syn_sent, synack_sent, closed, aborted, completed,
        } = self;
        FlowRow {
            id, app: app(a), page, src: node(src), dst: node(dst), cc, iw, bytes, bytes_delivered, start_s, end_s, fct_s, goodput_bps,
            data_pkts, retx_pkts, retx_fast_pkts, retx_timeout_pkts, timeouts, fast_retx, dupacks, sack_blocks, ss_entries, ca_entries,
            rwnd_stalls, send_stalls, rtt_samples, srtt_s, syn_sent, synack_sent, closed, aborted, completed,
        }
    }
}

/// One row of a connection's time series (web100 style).
#[derive(Clone, Debug, Serialize)]
pub struct TraceRow {
    pub flow: u64,
    pub app: Arc<str>,
    pub t: f64,
    pub cwnd: u64,
    pub ssthresh: Option<u64>,
    pub srtt_s: Option<f64>,
    pub rttvar_s: Option<f64>,
    pub rto_s: f64,
    pub flight: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub rwnd: u64,
    /// Acknowledged bits per second over the sampling interval (periodic rows only).
    pub tput_bps: Option<f64>,
    pub state: &'static str,
}

/// One periodic sample of a connection's web100 / RFC 4898 (TCP-ESTATS-MIB)
/// variables. Counters are cumulative from the connection's start, as in
/// web100; sequence numbers count from 0.
#[derive(Clone, Debug, Serialize)]
pub struct Web100Row {
    pub flow: u64,
    pub app: Arc<str>,
    pub t: f64,
    /// The congestion window in use, bytes (during CWR, the reduced one).
    #[serde(rename = "CurCwnd")]
    pub cur_cwnd: u64,
    #[serde(rename = "CurSsthresh")]
    pub cur_ssthresh: Option<u64>,
    /// Smoothed RTT, milliseconds.
    #[serde(rename = "SmoothedRTT")]
    pub smoothed_rtt: Option<f64>,
    /// The most recent RTT measurement, milliseconds.
    #[serde(rename = "SampleRTT")]
    pub sample_rtt: Option<f64>,
    /// The receiver's advertised window, bytes.
    #[serde(rename = "CurRwinRcvd")]
    pub cur_rwin_rcvd: u64,
    #[serde(rename = "SndNxt")]
    pub snd_nxt: u64,
    /// The highest SND.NXT so far (differs from SndNxt after a go-back).
    #[serde(rename = "SndMax")]
    pub snd_max: u64,
    #[serde(rename = "SndUna")]
    pub snd_una: u64,
    /// Segments the sender sent: data, retransmissions included, and SYN-ACKs.
    #[serde(rename = "PktsOut")]
    pub pkts_out: u64,
    /// Data segments sent, retransmissions included (web100's DataPktsOut).
    #[serde(rename = "DataPktsOut")]
    pub data_pkts_out: u64,
    #[serde(rename = "AckPktsIn")]
    pub ack_pkts_in: u64,
    #[serde(rename = "DupAcksIn")]
    pub dup_acks_in: u64,
    /// ACKs that carried SACK blocks.
    #[serde(rename = "SACKsRcvd")]
    pub sacks_rcvd: u64,
    #[serde(rename = "PktsRetrans")]
    pub pkts_retrans: u64,
    #[serde(rename = "Timeouts")]
    pub timeouts: u64,
    /// ACKs that grew the window in slow start.
    #[serde(rename = "SlowStart")]
    pub slow_start: u64,
    /// ACKs handled by congestion avoidance.
    #[serde(rename = "CongAvoid")]
    pub cong_avoid: u64,
    /// Multiplicative decreases: fast retransmits, timeouts and CWR entries.
    #[serde(rename = "CongestionSignals")]
    pub congestion_signals: u64,
    #[serde(rename = "SendStall")]
    pub send_stall: u64,
    /// Acknowledged bits per second over the last sampling interval.
    #[serde(rename = "InstantaneousBW")]
    pub instantaneous_bw: f64,
    pub state: &'static str,
}

/// One UBR switch port (an ATM link with a `ubr` queue): frames and cells.
#[derive(Clone, Debug, Serialize)]
pub struct PortRow {
    pub link: String,
    pub policy: &'static str,
    pub buffer_cells: u32,
    #[serde(flatten)]
    pub counters: crate::net::atm::UbrCounters,
    /// The most cells any one VC had in the buffer, and the mean over VCs of each VC's most.
    pub vc_max_cells: u32,
    pub vc_max_mean: f64,
}

/// One packet event on a logged link.
#[derive(Clone, Debug, Serialize)]
pub struct PacketRow {
    pub t: f64,
    /// Shared by the rows of one link (a log has millions of rows, and few names).
    pub link: Arc<str>,
    /// "enqueue", "dequeue" (transmission starts) or "drop".
    pub event: &'static str,
    pub flow: u64,
    pub app: Arc<str>,
    pub kind: &'static str,
    /// Data: sequence number of the first byte; ACK: the acknowledgement.
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
}

/// One link direction.
#[derive(Clone, Debug, Serialize)]
pub struct LinkRow {
    pub id: u64,
    pub src: String,
    pub dst: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    pub arrivals: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    pub drops: u64,
    pub drop_bytes: u64,
    /// Drops by loss injection (included in `drops`).
    pub loss_drops: u64,
    pub backlog_end: u64,
    pub propagating_end: u64,
    pub utilization: f64,
    pub queue_avg_pkts: f64,
    pub queue_max_pkts: u64,
    pub queue_max_bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EngineRow {
    pub events: u64,
    pub sim_seconds: f64,
    /// Wall-clock seconds of the event loop.
    pub wall_seconds: f64,
    /// Wall-clock seconds from the scenario text to the first event (parsing and building).
    pub setup_seconds: f64,
    /// Wall-clock seconds building the result tables after the loop.
    pub results_seconds: f64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// Packets alive at the end (queued, in service or propagating).
    pub packets_in_network_end: u64,
    pub packet_pool_peak: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Results {
    pub flows: Vec<FlowRow>,
    pub links: Vec<LinkRow>,
    /// The applications' pages table ([`crate::app::PageRow`]).
    pub pages: Vec<crate::app::PageRow>,
    pub traces: Vec<TraceRow>,
    pub web100: Vec<Web100Row>,
    pub ports: Vec<PortRow>,
    pub packets: Vec<PacketRow>,
    /// The capture files written ([`crate::net::capture`]); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<crate::net::capture::CaptureRow>,
    pub engine: EngineRow,
}

/// The results as JSON text.
pub fn to_json(r: &Results) -> serde_json::Result<String> {
    serde_json::to_string(r)
}

/// The results as JSON text with each table as columns
/// (`{"flows": {"id": [...], ...}, ...}`, see [`columns`]); `captures` stays
/// a list of rows (one per file), and `engine` one object. With `blobs`,
/// columns of numbers are written there as bytes, and columns of strings of
/// few values as codes (see [`columns::Columns::write_json`] and [`check_columns`]).
pub fn to_json_columns(r: &Results, blobs: Option<&mut Vec<Vec<u8>>>) -> Result<String, columns::Error> {
    to_json_columns_after(r, None, blobs)
}

/// [`to_json_columns`] of results whose first flows' rows are in the columns
/// `flows_before` instead of in `r.flows` (the flows table is those columns,
/// then `r.flows`): see [`crate::Simulator::take_columns`].
pub fn to_json_columns_after(r: &Results, flows_before: Option<columns::Columns>, mut blobs: Option<&mut Vec<Vec<u8>>>) -> Result<String, columns::Error> {
    use columns::Columns;
    let mut out = Vec::with_capacity(1 << 16);
    // A long table in two halves side by side (a packet log, or the flows of
    // a long run of short transfers, can hold millions of rows).
    fn of<T: Serialize + Sync>(rows: &[T]) -> Result<Columns, columns::Error> {
        Columns::of_halves(rows, rows.len() >= results::PARALLEL_ROWS)
    }
    let flows = match flows_before {
        None => of(&r.flows)?,
        Some(mut before) => {
            for row in &r.flows {
                before.push_row(row)?;
            }
            before
        }
    };
    let tables = [flows, of(&r.links)?, of(&r.pages)?, of(&r.traces)?, of(&r.web100)?, of(&r.ports)?, of(&r.packets)?];
    out.push(b'{');
    for (name, cols) in TABLES.into_iter().zip(tables) {
        out.extend_from_slice(format!("\"{name}\":").as_bytes());
        cols.write_json(&mut out, blobs.as_deref_mut());
        out.push(b',');
    }
    let json = |e: serde_json::Error| columns::Error(e.to_string());
    if !r.captures.is_empty() {
        out.extend_from_slice(b"\"captures\":");
        serde_json::to_writer(&mut out, &r.captures).map_err(json)?;
        out.push(b',');
    }
    out.extend_from_slice(b"\"engine\":");
    serde_json::to_writer(&mut out, &r.engine).map_err(json)?;
    out.push(b'}');
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// The tables `to_json_columns` writes as columns.
pub const TABLES: [&str; 7] = ["flows", "links", "pages", "traces", "web100", "ports", "packets"];

/// Checks that the columns `to_json_columns` writes with blobs hold what the
/// rows hold (`serde_json::to_value` of each table): every column of every
/// row, numbers read back from their bytes, strings and booleans from their codes.
/// The text of the numbers in a column left as text is compared to within
/// one rounding (the JSON parser here need not round-trip every float);
/// every other value exactly.
pub fn check_columns(r: &Results) -> Result<(), String> {
    use serde_json::Value;
    let mut blobs = Vec::new();
    let text = to_json_columns(r, Some(&mut blobs)).map_err(|e| e.to_string())?;
    let packed: Value = serde_json::from_str(&text).map_err(|e| format!("columns are no JSON: {e}"))?;
    let rows = serde_json::to_value(r).map_err(|e| e.to_string())?;
    let near = |a: &Value, b: &Value| match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            x == y || (x - y).abs() <= 2.0 * f64::EPSILON * x.abs().max(y.abs())
        }
        _ => a == b,
    };
    for table in TABLES {
        let want = rows[table].as_array().ok_or(format!("{table}: no rows"))?;
        let cols = packed[table].as_object().ok_or(format!("{table}: no columns"))?;
        if want.is_empty() != cols.is_empty() {
            return Err(format!("{table}: {} rows but {} columns", want.len(), cols.len()));
        }
        for (k, col) in cols {
            let got: Vec<Value> = match col.get("bin") {
                None => col.as_array().ok_or(format!("{table}.{k}: neither a list nor a blob"))?.clone(),
                Some(bin) => {
                    let bytes = bin.as_u64().and_then(|b| blobs.get(b as usize)).ok_or(format!("{table}.{k}: no blob {bin}"))?;
                    let eight = |b: &[u8]| -> [u8; 8] { b.try_into().expect("8 bytes") };
                    match col["dtype"].as_str() {
                        Some("<i8") => bytes.chunks_exact(8).map(|b| Value::from(i64::from_le_bytes(eight(b)))).collect(),
                        Some("<f8") => bytes.chunks_exact(8).map(|b| Value::from(f64::from_le_bytes(eight(b)))).collect(),
                        Some(codes @ ("<u4" | "|u1")) => {
                            let levels = col["levels"].as_array().ok_or(format!("{table}.{k}: codes without levels"))?;
                            let width = if codes == "<u4" { 4 } else { 1 };
                            let code = |b: &[u8]| b.iter().rev().fold(0usize, |n, &x| n << 8 | usize::from(x));
                            bytes.chunks_exact(width).map(|b| levels.get(code(b)).cloned().unwrap_or(Value::Null)).collect()
                        }
                        other => return Err(format!("{table}.{k}: dtype {other:?}")),
                    }
                }
            };
            if got.len() != want.len() {
                return Err(format!("{table}.{k}: {} values for {} rows", got.len(), want.len()));
            }
            let exact = col.get("bin").is_some();
            for (i, (g, row)) in got.iter().zip(want).enumerate() {
                let w = row.get(k).ok_or(format!("{table}[{i}] has no {k}"))?;
                if !(if exact { g == w } else { near(g, w) }) {
                    return Err(format!("{table}.{k}[{i}]: {g} in the columns, {w} in the rows"));
                }
            }
        }
        if let Some(row) = want.first() {
            let n = row.as_object().map_or(0, |o| o.len());
            if n != cols.len() {
                return Err(format!("{table}: rows of {n} fields, {} columns", cols.len()));
            }
        }
    }
    Ok(())
}
