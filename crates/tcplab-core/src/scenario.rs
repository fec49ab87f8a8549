//! The normalized scenario the core runs: every quantity an integer in base
//! units (nanoseconds, bytes, bits per second), every topology explicit.
//!
//! The Python front parses the human scenario file (units, defaults,
//! shorthands such as `dumbbell`) and hands this form over as JSON; the core
//! still checks everything it relies on and names the offending field.

use crate::app::{AppKind, SizeDist, Think, WebConfig};
use crate::cc::HighSpeedLookup;
use crate::error::{Error, Result};
use crate::engine::rng::RngStream;
use crate::net::queue::{Red, RedConfig};
use crate::net::atm::{Policy, UbrConfig, UbrPort};
use crate::net::{DropTail, Limit, QueueDisc};
use crate::tcp::{CcKind, NewRenoRecovery, RttConfig, SackLoss, SackRecovery, TcpConfig, TimeoutSsthresh};
use crate::time::Dur;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub seed: u64,
    /// Stop time; `None`: run until every transfer is done.
    pub stop_ns: Option<u64>,
    /// Stop as soon as these applications have finished (every transfer,
    /// burst or page they make completed), or at `stop_ns`, whichever comes
    /// first.
    #[serde(default)]
    pub until: Vec<String>,
    pub nodes: Vec<String>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// The packed form of more links: one column per field, nodes and
    /// queues by index (into `nodes` and `queues`). Large topologies come
    /// this way: 400,000 links take a few integers each.
    #[serde(default)]
    pub link_columns: Option<LinkColumns>,
    /// The queues `link_columns` refers to.
    #[serde(default)]
    pub queues: Vec<QueueSpec>,
    /// The TCP settings of every application that has none of its own.
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    #[serde(default)]
    pub apps: Vec<AppSpec>,
    /// The packed form of more applications, after `apps`: name, nodes (by
    /// index) and a template (by index into `app_templates`) each.
    #[serde(default)]
    pub app_columns: Option<AppColumns>,
    /// Applications without name, src and dst, shared by `app_columns`.
    #[serde(default)]
    pub app_templates: Vec<AppSpec>,
    /// Let links whose packets all continue onto a link fed by them alone hand
    /// packets on without an arrival event (same results, fewer events).
    #[serde(default = "yes")]
    pub advance_links: bool,
    /// Prefetch in stages, several events ahead (`None`: when the per-flow
    /// state is larger than a cache holds). Results are the same either way.
    #[serde(default)]
    pub deep_prefetch: Option<bool>,
    /// Use a finished connection's slot again once nothing of it is left
    /// (`None`: where applications open connections as they run and nothing
    /// records connections by slot). Results are the same either way.
    #[serde(default)]
    pub recycle_connections: Option<bool>,
    #[serde(default)]
    pub losses: Vec<LossSpec>,
    #[serde(default)]
    pub trace: TraceSpec,
}

/// Loss injection on one link direction.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossSpec {
    pub from: String,
    pub to: String,
    /// Only packets of this application (`None`: all).
    pub app: Option<String>,
    /// Only packets of this kind (`None`: all kinds).
    pub kind: Option<String>,
    /// Drop the n-th matching packets crossing the link (1-based, retransmissions counted).
    #[serde(default)]
    pub nth: Vec<u64>,
    /// Drop each matching packet independently with this probability.
    pub rate: Option<f64>,
}

/// What to record while running.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Sample traced connections every this many ns.
    pub interval_ns: Option<u64>,
    /// Also record a row whenever cwnd, ssthresh or the state changes.
    #[serde(default)]
    pub on_change: bool,
    /// Applications whose connections are traced (empty: all, when tracing is on).
    #[serde(default)]
    pub apps: Vec<String>,
    /// Links (from, to) whose packets are logged.
    #[serde(default)]
    pub links: Vec<(String, String)>,
    /// Periodic samples also write web100 / RFC 4898 rows.
    #[serde(default)]
    pub web100: bool,
    /// Links (from, to) whose packets are written to capture files.
    #[serde(default)]
    pub pcap: Vec<(String, String)>,
    /// The existing directory the capture files go to (with `pcap`).
    pub pcap_dir: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueueSpec,
    /// An ATM link: packets travel as AAL5 cells.
    #[serde(default)]
    pub atm: bool,
}

/// Links as columns of equal length (see [`Scenario::link_columns`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkColumns {
    pub from: Col<u32>,
    pub to: Col<u32>,
    pub rate_bps: Col<u64>,
    pub delay_ns: Col<u64>,
    pub queue: Col<u32>,
    /// Empty: no link is ATM.
    #[serde(default)]
    pub atm: Vec<bool>,
}

/// Applications as columns of equal length (see [`Scenario::app_columns`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppColumns {
    pub name: Vec<String>,
    pub src: Col<u32>,
    pub dst: Col<u32>,
    pub template: Col<u32>,
}

/// A column of integers: a JSON array, or `{"bin": k, "dtype": "<u4"}`
/// (`"<u8"` for 64 bits), the little-endian bytes of the `k`-th blob handed
/// over with the scenario ([`Scenario::from_json_with`]), which spares
/// formatting and parsing a few million numbers.
#[derive(Debug)]
pub enum Col<T> {
    Values(Vec<T>),
    Bin { index: usize, dtype: String },
}

impl<T> Default for Col<T> {
    fn default() -> Self {
        Col::Values(Vec::new())
    }
}

/// An integer a blob column may hold.
pub trait LeInt: Copy {
    const DTYPE: &'static str;
    const SIZE: usize;
    fn from_le(b: &[u8]) -> Self;
}

impl LeInt for u32 {
    const DTYPE: &'static str = "<u4";
    const SIZE: usize = 4;
    fn from_le(b: &[u8]) -> Self {
        u32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
}

impl LeInt for u64 {
    const DTYPE: &'static str = "<u8";
    const SIZE: usize = 8;
    fn from_le(b: &[u8]) -> Self {
        u64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
}

impl<T: LeInt> Col<T> {
    /// The values (a blob column must have been resolved).
    pub fn values(&self) -> &[T] {
        match self {
            Col::Values(v) => v,
            Col::Bin { .. } => &[],
        }
    }

    /// Read a blob column's values from `blobs`.
    fn resolve(&mut self, field: &str, blobs: &[&[u8]]) -> Result<()> {
        let Col::Bin { index, dtype } = self else { return Ok(()) };
        if dtype != T::DTYPE {
            return Err(invalid(field.into(), format!("dtype '{dtype}' is not this column's ('{}')", T::DTYPE)));
        }
        let blob = blobs.get(*index).ok_or_else(|| invalid(field.into(), format!("blob {index} was not handed over ({} were)", blobs.len())))?;
        if blob.len() % T::SIZE != 0 {
            return Err(invalid(field.into(), format!("a blob of {} bytes is not a whole number of {}-byte values", blob.len(), T::SIZE)));
        }
        *self = Col::Values(blob.chunks_exact(T::SIZE).map(T::from_le).collect());
        Ok(())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Col<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Col<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of integers or {\"bin\": k, \"dtype\": ...}")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Col<T>, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(x) = seq.next_element()? {
                    v.push(x);
                }
                Ok(Col::Values(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Col<T>, A::Error> {
                let (mut index, mut dtype) = (None, None);
                while let Some(k) = map.next_key::<String>()? {
                    match k.as_str() {
                        "bin" => index = Some(map.next_value::<usize>()?),
                        "dtype" => dtype = Some(map.next_value::<String>()?),
                        other => return Err(serde::de::Error::unknown_field(other, &["bin", "dtype"])),
                    }
                }
                match (index, dtype) {
                    (Some(index), Some(dtype)) => Ok(Col::Bin { index, dtype }),
                    _ => Err(serde::de::Error::custom("a blob column needs both bin and dtype")),
                }
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// One link of either form, as the builder reads it.
#[derive(Debug, Clone, Copy)]
pub struct LinkView<'a> {
    pub from: &'a str,
    pub to: &'a str,
    /// The indices of `from` and `to` in `nodes`, when the packed form gave them.
    pub ends: Option<(u32, u32)>,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: &'a QueueSpec,
    pub atm: bool,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    Droptail {
        limit_pkts: Option<u64>,
        limit_bytes: Option<u64>,
    },
    Red {
        limit_pkts: Option<u64>,
        limit_bytes: Option<u64>,
        min_th: f64,
        max_th: f64,
        max_p: f64,
        w_q: f64,
        gentle: bool,
        byte_mode: bool,
        mean_pkt_bytes: u64,
    },
    /// A UBR switch output port (ATM links only): a buffer of cells.
    Ubr {
        buffer_cells: u32,
        r: f64,
        z: f64,
        policy: String,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ThinkSpec {
    Constant { ns: u64 },
    Uniform { min_ns: u64, max_ns: u64 },
    Exponential { mean_ns: u64 },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    /// Name, src and dst are absent only from the templates of `app_columns`.
    #[serde(default)]
    pub name: String,
    /// "bulk", "repeat", "web" or "burst".
    pub kind: String,
    #[serde(default)]
    pub src: String,
    #[serde(default)]
    pub dst: String,
    /// A burst's servers after `src`: transfer `i` comes from
    /// `[src, extra_src...][i % (1 + extra_src.len())]`.
    #[serde(default)]
    pub extra_src: Vec<String>,
    /// The indices of src and dst in `nodes`, when the packed form gave them
    /// (then src and dst stay empty).
    #[serde(skip)]
    pub node_ids: Option<(u32, u32)>,
    /// When the application first wakes; with `start_max_ns`, the low end
    /// of a range the start is drawn from uniformly (per seed).
    pub start_ns: u64,
    #[serde(default)]
    pub start_max_ns: Option<u64>,
    /// A burst's number of simultaneous transfers (they share `size_bytes`).
    #[serde(default)]
    pub flows: Option<u32>,
    pub size_bytes: Option<u64>,
    pub think: Option<ThinkSpec>,
    pub count: Option<u64>,
    /// Request bytes the client sends when the connection opens (handshake only).
    #[serde(default)]
    pub request_bytes: u64,
    /// The page model of a "web" application.
    #[serde(default)]
    pub web: Option<WebSpec>,
    /// A repeat client that keeps its connection open between transfers.
    #[serde(default)]
    pub persistent: bool,
    /// Its own TCP settings; `None`: the scenario's `tcp`.
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    pub http11: bool,
    pub embedded: u32,
    pub primary: SizeSpec,
    pub object: SizeSpec,
    pub pages: Option<u64>,
    /// A page every this many ns (instead of think times).
    #[serde(default)]
    pub cycle_ns: Option<u64>,
    /// One page at a time (closed loop) rather than one per cycle regardless.
    #[serde(default)]
    pub cycle_closed: bool,
    /// Think times run from each page's start, not its end.
    #[serde(default)]
    pub think_from_start: bool,
    /// The embedded objects are asked for with the primary.
    #[serde(default)]
    pub embedded_with_primary: bool,
    /// Every page on one connection, kept open for the whole run.
    #[serde(default)]
    pub persistent: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeSpec {
    Constant { bytes: u64 },
    Lognormal { median_bytes: f64, sigma: f64, max_bytes: u64 },
    Pareto { median_bytes: f64, shape: f64, max_bytes: u64 },
    Empirical { points: Vec<(f64, f64)> },
}

impl SizeSpec {
    pub fn build(&self, field: &str) -> Result<SizeDist> {
        Ok(match self {
            SizeSpec::Constant { bytes } => SizeDist::Constant(*bytes),
            SizeSpec::Lognormal { median_bytes, sigma, max_bytes } => {
                if !(*median_bytes > 0.0 && *sigma >= 0.0) {
                    return Err(invalid(field.to_string(), "median must be positive and sigma not negative"));
                }
                SizeDist::Lognormal { median: *median_bytes, sigma: *sigma, max: *max_bytes }
            }
            SizeSpec::Pareto { median_bytes, shape, max_bytes } => {
                if !(*median_bytes > 0.0 && *shape > 0.0) {
                    return Err(invalid(field.to_string(), "median and shape must be positive"));
                }
                SizeDist::Pareto { median: *median_bytes, shape: *shape, max: *max_bytes }
            }
            SizeSpec::Empirical { points } => {
                let ok = !points.is_empty()
                    && points.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
                    && points.iter().all(|p| (0.0..=1.0).contains(&p.1) && p.0 >= 0.0);
                if !ok {
                    return Err(invalid(field.to_string(), "points must be (bytes, cdf) pairs, both non-decreasing, cdf within [0, 1]"));
                }
                SizeDist::Empirical(points.clone())
            }
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    pub cc: String,
    pub mss: u32,
    pub header: u32,
    pub iw_bytes: u64,
    pub max_window_bytes: u64,
    pub initial_ssthresh_bytes: Option<u64>,
    /// Set the initial ssthresh to the path's bandwidth-delay product.
    #[serde(default)]
    pub ssthresh_bdp: bool,
    pub rto_initial_ns: u64,
    pub rto_min_ns: u64,
    pub rto_max_ns: u64,
    pub granularity_ns: u64,
    pub dupack_threshold: u32,
    pub max_backoff: u32,
    /// Retransmissions of one segment before the connection gives up
    /// (absent: 15, Linux's `tcp_retries2`; null: never).
    #[serde(default = "fifteen")]
    pub max_retries: Option<u32>,
    pub abc_limit: u32,
    pub delayed_ack: bool,
    pub delack_timeout_ns: u64,
    pub delack_segments: u32,
    #[serde(default)]
    pub limited_transmit: bool,
    #[serde(default = "yes")]
    pub idle_restart: bool,
    #[serde(default = "three")]
    pub sack_blocks: u32,
    /// SYN / SYN-ACK / request before data, FIN at the end.
    #[serde(default)]
    pub handshake: bool,
    #[serde(default = "yes")]
    pub byte_counting: bool,
    /// CUBIC's HyStart.
    #[serde(default)]
    pub hystart: bool,
    /// Linux 2.4 local congestion (send stalls at the sending host's interface queue).
    #[serde(default)]
    pub local_congestion: bool,
    /// HighSpeed TCP's a(w)/b(w): "formula" (default), "table" (row at or below), "linux" (row above).
    #[serde(default)]
    pub hstcp_lookup: Option<String>,
    /// The receiver's window grows as Linux 2.4's did.
    #[serde(default)]
    pub window_growth: bool,
    /// SACK recovery: "rfc6675" (default), "ns2-1998" (ns-2's Sack1 agent of
    /// 1998), "ns2" (its Sack1 of 2.35) or "linux" (Linux 2.6's rate-halving).
    #[serde(default)]
    pub sack_recovery: Option<String>,
    /// Which segments SACK recovery deems lost: "rfc6675" (default, IsLost) or "fack".
    #[serde(default)]
    pub sack_loss: Option<String>,
    /// NewReno recovery: "rfc6582" (default) or "ns2-1998" (ns-2's flywheel NewReno).
    #[serde(default)]
    pub newreno_recovery: Option<String>,
    /// What a timeout does to ssthresh: "rfc5681" (default), "ns2" or "linux".
    #[serde(default)]
    pub timeout_ssthresh: Option<String>,
    /// The ACK that ends a fast recovery also grows the window (ns-2).
    #[serde(default)]
    pub exit_growth: bool,
    /// Limited transmit also resends below the highest sent (ns-2's singledup_).
    #[serde(default)]
    pub lt_old_data: bool,
    /// RTT estimator: "rfc6298" (default) or "ns2" (whole clock ticks).
    #[serde(default)]
    pub rtt_estimator: Option<String>,
    /// With the ns2 estimator, the clock's ticks fall this long after each
    /// multiple of the granularity (less than one granularity).
    #[serde(default)]
    pub clock_phase_ns: u64,
    /// ... or at a phase drawn for each connection from the seed (ns-2's boot_time_).
    #[serde(default)]
    pub clock_phase_random: bool,
    /// With delayed ACKs, how many ACKs at the start of a connection go out at once (Linux's quick-ACK mode).
    #[serde(default)]
    pub quickack: u32,
    /// RTT samples as with RFC 7323 timestamps (retransmissions timed too).
    #[serde(default)]
    pub timestamps: bool,
    /// A SACK option costs 8 bytes a block (ns-2's Sack1 sink).
    #[serde(default)]
    pub ns2_sack_bytes: bool,
    /// Congestion avoidance keeps the fraction of a byte (ns-2's double cwnd_).
    #[serde(default)]
    pub ns2_ca_fraction: bool,
    /// A fast retransmit halves the window, not the flight (ns-2's slowdown).
    #[serde(default)]
    pub ns2_fr_halving: bool,
    /// Each opportunity to send waits a random time up to this (ns-2's overhead_).
    #[serde(default)]
    pub send_jitter_ns: u64,
}

fn three() -> u32 {
    3
}

fn fifteen() -> Option<u32> {
    Some(15)
}

fn invalid(field: String, message: impl Into<String>) -> Error {
    Error::Invalid { field, message: message.into() }
}

/// A setting named by one of `choices` (the first is the default when
/// `value` is absent), or an error for `field.key` naming what is allowed.
fn choose<T: Copy>(field: &str, key: &str, value: Option<&str>, what: &str, choices: &[(&str, T)]) -> Result<T> {
    let v = value.unwrap_or(choices[0].0);
    match choices.iter().find(|(name, _)| *name == v) {
        Some(&(_, t)) => Ok(t),
        None => {
            let allowed: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
            Err(invalid(format!("{field}.{key}"), format!("'{v}' is not {what}; allowed: {}", allowed.join(", "))))
        }
    }
}

impl Scenario {
    pub fn from_json(s: &str) -> Result<Scenario> {
        Scenario::from_json_with(s, &[])
    }

    /// Parse a scenario whose packed columns may refer to `blobs` (see [`Col`]).
    pub fn from_json_with(s: &str, blobs: &[&[u8]]) -> Result<Scenario> {
        let mut sc: Scenario = serde_json::from_str(s).map_err(|e| Error::Parse(e.to_string()))?;
        if let Some(c) = sc.link_columns.as_mut() {
            c.from.resolve("link_columns.from", blobs)?;
            c.to.resolve("link_columns.to", blobs)?;
            c.rate_bps.resolve("link_columns.rate_bps", blobs)?;
            c.delay_ns.resolve("link_columns.delay_ns", blobs)?;
            c.queue.resolve("link_columns.queue", blobs)?;
        }
        if let Some(c) = sc.app_columns.as_mut() {
            c.src.resolve("app_columns.src", blobs)?;
            c.dst.resolve("app_columns.dst", blobs)?;
            c.template.resolve("app_columns.template", blobs)?;
        }
        sc.unpack_apps()?;
        Ok(sc)
    }

    /// Append the applications of `app_columns` to `apps`.
    fn unpack_apps(&mut self) -> Result<()> {
        let Some(c) = self.app_columns.take() else { return Ok(()) };
        let n = c.name.len();
        let (src, dst, template) = (c.src.values(), c.dst.values(), c.template.values());
        if src.len() != n || dst.len() != n || template.len() != n {
            return Err(invalid("app_columns".into(), "every column must have one entry per application"));
        }
        let nodes = self.nodes.len();
        let node = |col: &str, i: usize, k: u32| -> Result<u32> {
            if (k as usize) < nodes {
                Ok(k)
            } else {
                Err(invalid(format!("app_columns.{col}[{i}]"), format!("node index {k} is out of range ({nodes} nodes)")))
            }
        };
        let mut apps = Vec::with_capacity(n);
        for (i, name) in c.name.into_iter().enumerate() {
            let k = template[i] as usize;
            let t = self.app_templates.get(k).ok_or_else(|| invalid(format!("app_columns.template[{i}]"), format!("template index {k} is out of range ({} templates)", self.app_templates.len())))?;
            let ids = (node("src", i, src[i])?, node("dst", i, dst[i])?);
            apps.push(AppSpec { name, node_ids: Some(ids), ..t.clone() });
        }
        if self.apps.is_empty() {
            self.apps = apps; // no copy of 100,000 specifications
        } else {
            self.apps.append(&mut apps);
        }
        Ok(())
    }

    /// Every link: those of `links`, then those of `link_columns`, whose
    /// indices are checked here.
    pub fn link_views(&self) -> Result<Vec<LinkView<'_>>> {
        let mut out: Vec<LinkView<'_>> = self
            .links
            .iter()
            .map(|l| LinkView { from: &l.from, to: &l.to, ends: None, rate_bps: l.rate_bps, delay_ns: l.delay_ns, queue: &l.queue, atm: l.atm })
            .collect();
        let Some(c) = &self.link_columns else { return Ok(out) };
        let (from, to, rate, delay, queue) = (c.from.values(), c.to.values(), c.rate_bps.values(), c.delay_ns.values(), c.queue.values());
        let n = from.len();
        if [to.len(), rate.len(), delay.len(), queue.len()].iter().any(|&m| m != n) || !(c.atm.is_empty() || c.atm.len() == n) {
            return Err(invalid("link_columns".into(), "every column must have one entry per link"));
        }
        out.reserve(n);
        let node = |col: &str, i: usize, k: u32| -> Result<&str> {
            self.nodes.get(k as usize).map(String::as_str).ok_or_else(|| invalid(format!("link_columns.{col}[{i}]"), format!("node index {k} is out of range ({} nodes)", self.nodes.len())))
        };
        for i in 0..n {
            let q = queue[i];
            let queue = self.queues.get(q as usize).ok_or_else(|| invalid(format!("link_columns.queue[{i}]"), format!("queue index {q} is out of range ({} queues)", self.queues.len())))?;
            out.push(LinkView {
                from: node("from", i, from[i])?,
                to: node("to", i, to[i])?,
                ends: Some((from[i], to[i])),
                rate_bps: rate[i],
                delay_ns: delay[i],
                queue,
                atm: c.atm.get(i).copied().unwrap_or(false),
            });
        }
        Ok(out)
    }

    /// The TCP settings application `i` uses.
    pub fn app_tcp(&self, i: usize) -> Result<&TcpSpec> {
        self.apps[i].tcp.as_ref().or(self.tcp.as_ref()).ok_or_else(|| invalid(format!("apps[{i}].tcp"), "missing, and the scenario gives no shared tcp"))
    }
}

impl QueueSpec {
    /// `rng`: the queue's random stream, made only for a queue that draws (RED).
    /// `field` names the link, and is called only to report an error.
    pub fn build(&self, field: &dyn Fn() -> String, rate_bps: u64, rng: impl FnOnce() -> RngStream) -> Result<QueueDisc> {
        let limit = |p: Option<u64>, b: Option<u64>| match (p, b) {
            (Some(p), None) => Ok(Limit::Packets(p)),
            (None, Some(b)) => Ok(Limit::Bytes(b)),
            _ => Err(invalid(format!("{}.queue", field()), "give exactly one of a packet limit and a byte limit")),
        };
        match *self {
            QueueSpec::Droptail { limit_pkts, limit_bytes } => Ok(QueueDisc::DropTail(DropTail { limit: limit(limit_pkts, limit_bytes)? })),
            QueueSpec::Red { limit_pkts, limit_bytes, min_th, max_th, max_p, w_q, gentle, byte_mode, mean_pkt_bytes } => {
                if !(min_th >= 0.0 && max_th > min_th) {
                    return Err(invalid(format!("{}.queue.max_th", field()), "must be above min_th"));
                }
                if !(0.0..=1.0).contains(&max_p) {
                    return Err(invalid(format!("{}.queue.max_p", field()), "must be from 0 to 1"));
                }
                if !(w_q > 0.0 && w_q <= 1.0) {
                    return Err(invalid(format!("{}.queue.w_q", field()), "must be above 0 and at most 1"));
                }
                if mean_pkt_bytes == 0 {
                    return Err(invalid(format!("{}.queue.mean_pkt", field()), "must be at least 1 byte"));
                }
                let cfg = RedConfig { min_th, max_th, max_p, w_q, gentle, byte_mode, mean_pkt_bytes, limit: limit(limit_pkts, limit_bytes)? };
                Ok(QueueDisc::Red(Box::new(Red::new(cfg, rate_bps, rng()))))
            }
            // The port replaces the packet queue; this one is never offered a packet.
            QueueSpec::Ubr { .. } => Ok(QueueDisc::DropTail(DropTail { limit: Limit::Packets(0) })),
        }
    }

    /// The UBR port of a `ubr` queue on an ATM link whose cells take `cell_time`.
    pub fn ubr_port(&self, field: &dyn Fn() -> String, atm: bool, cell_time: Dur) -> Result<Option<UbrPort>> {
        let QueueSpec::Ubr { buffer_cells, r, z, ref policy } = *self else { return Ok(None) };
        if !atm {
            return Err(invalid(format!("{}.queue", field()), "a ubr queue needs an ATM link (atm = true)"));
        }
        let policy = Policy::parse(policy).ok_or_else(|| invalid(format!("{}.queue.policy", field()), format!("'{policy}' is not a drop policy; allowed: ubr, epd, sd")))?;
        if buffer_cells == 0 || !(0.0..=1.0).contains(&r) || z.is_nan() || z <= 0.0 {
            return Err(invalid(format!("{}.queue", field()), "buffer at least 1 cell, r within [0, 1], z positive"));
        }
        Ok(Some(UbrPort::new(UbrConfig { buffer_cells, r, z, policy }, cell_time)))
    }
}

impl AppSpec {
    fn think(&self, field: &str) -> Result<Think> {
        Ok(match self.think {
            None => Think::Constant(Dur::ZERO),
            Some(ThinkSpec::Constant { ns }) => Think::Constant(Dur::from_ns(ns)),
            Some(ThinkSpec::Uniform { min_ns, max_ns }) => {
                if min_ns > max_ns {
                    return Err(invalid(format!("{field}.think"), "min is larger than max"));
                }
                Think::Uniform { min: Dur::from_ns(min_ns), max: Dur::from_ns(max_ns) }
            }
            Some(ThinkSpec::Exponential { mean_ns }) => Think::Exponential { mean: Dur::from_ns(mean_ns) },
        })
    }

    pub fn kind(&self, field: &str) -> Result<AppKind> {
        if !self.extra_src.is_empty() && self.kind != "burst" {
            return Err(invalid(format!("{field}.extra_src"), "only a burst spreads its transfers over several servers"));
        }
        match self.kind.as_str() {
            "bulk" => Ok(AppKind::Bulk),
            "web" => {
                let w = self.web.as_ref().ok_or_else(|| invalid(format!("{field}.web"), "a web application needs its page model"))?;
                if w.persistent && !w.http11 {
                    return Err(invalid(format!("{field}.persistent"), "needs HTTP/1.1 (HTTP/1.0 opens a connection per object)"));
                }
                if w.cycle_ns == Some(0) {
                    return Err(invalid(format!("{field}.cycle"), "must be above 0s"));
                }
                Ok(AppKind::Web(Box::new(WebConfig {
                    http11: w.http11,
                    embedded: w.embedded,
                    primary: w.primary.build(&format!("{field}.primary"))?,
                    object: w.object.build(&format!("{field}.object"))?,
                    think: self.think(field)?,
                    pages: w.pages,
                    cycle: w.cycle_ns.map(Dur::from_ns),
                    cycle_closed: w.cycle_closed,
                    think_from_start: w.think_from_start,
                    embedded_with_primary: w.embedded_with_primary,
                    persistent: w.persistent,
                })))
            }
            "repeat" => {
                let think = self.think(field)?;
                Ok(AppKind::Repeat { think, count: self.count, persistent: self.persistent })
            }
            "burst" => {
                let flows = self.flows.filter(|&n| n > 0).ok_or_else(|| invalid(format!("{field}.flows"), "a burst needs at least one flow"))?;
                let bytes = self.size_bytes.ok_or_else(|| invalid(format!("{field}.size"), "a burst needs its total size"))?;
                Ok(AppKind::Burst { flows, bytes, servers: 1 + self.extra_src.len() as u32 })
            }
            other => Err(invalid(format!("{field}.type"), format!("'{other}' is not an application type; allowed: bulk, repeat, web, burst"))),
        }
    }
}

impl TcpSpec {
    pub fn build(&self, field: &str) -> Result<TcpConfig> {
        let cc = CcKind::parse(&self.cc)
            .ok_or_else(|| invalid(format!("{field}.cc"), format!("'{}' is not a congestion control; allowed: {}", self.cc, CcKind::NAMES.join(", "))))?;
        let positive = |name: &str, v: u64| -> Result<()> {
            if v == 0 {
                Err(invalid(format!("{field}.{name}"), "must be positive"))
            } else {
                Ok(())
            }
        };
        positive("mss", u64::from(self.mss))?;
        positive("iw", self.iw_bytes)?;
        if !(1..=4).contains(&self.sack_blocks) {
            return Err(invalid(format!("{field}.sack_blocks"), "must be 1 to 4"));
        }
        positive("dupack_threshold", u64::from(self.dupack_threshold))?;
        positive("delack_segments", u64::from(self.delack_segments))?;
        if self.max_window_bytes < u64::from(self.mss) {
            return Err(invalid(format!("{field}.window"), "must hold at least one segment"));
        }
        if self.rto_min_ns > self.rto_max_ns {
            return Err(invalid(format!("{field}.rto_min"), "is larger than rto_max"));
        }
        if self.send_jitter_ns > 10_000_000_000 {
            return Err(invalid(format!("{field}.send_jitter"), "must be at most 10 s"));
        }
        if self.send_jitter_ns > 0 && self.local_congestion {
            // Held-back segments are not yet in the interface queue whose room a send stall reads.
            return Err(invalid(format!("{field}.send_jitter"), "holds segments back before the interface queue whose room local_congestion = 'linux' reads; use one or the other"));
        }
        if self.clock_phase_ns >= self.granularity_ns.max(1) {
            return Err(invalid(format!("{field}.clock_phase"), "must be less than clock_granularity"));
        }
        if self.hystart && cc != CcKind::Cubic {
            return Err(invalid(format!("{field}.hystart"), format!("is cubic's slow start; cc is '{}' (allowed with hystart: cubic)", self.cc)));
        }
        let sack_recovery = choose(field, "sack_recovery", self.sack_recovery.as_deref(), "a SACK recovery",
            &[("rfc6675", SackRecovery::Rfc6675), ("ns2-1998", SackRecovery::Ns2Sack1 { stall_at_end: true }), ("ns2", SackRecovery::Ns2Sack1v235), ("linux", SackRecovery::LinuxRateHalving)])?;
        let sack_loss = choose(field, "sack_loss", self.sack_loss.as_deref(), "a loss rule", &[("rfc6675", SackLoss::Rfc6675), ("fack", SackLoss::Fack)])?;
        // Under a controller without SACK it has no effect, as sack_recovery;
        // with ns-2's Sack1, which keeps no scoreboard, it would contradict.
        if sack_loss == SackLoss::Fack && !matches!(sack_recovery, SackRecovery::Rfc6675 | SackRecovery::LinuxRateHalving) {
            return Err(invalid(format!("{field}.sack_loss"), format!("'fack' reads the SACK scoreboard; sack_recovery '{}' keeps a pipe counter instead (allowed with fack: rfc6675, linux)", self.sack_recovery.as_deref().unwrap_or_default())));
        }
        Ok(TcpConfig {
            cc,
            mss: self.mss,
            header: self.header,
            iw_bytes: self.iw_bytes,
            max_window: self.max_window_bytes,
            initial_ssthresh: self.initial_ssthresh_bytes.unwrap_or(u64::MAX),
            rtt: RttConfig {
                initial_rto: Dur::from_ns(self.rto_initial_ns),
                min_rto: Dur::from_ns(self.rto_min_ns),
                max_rto: Dur::from_ns(self.rto_max_ns),
                granularity: Dur::from_ns(self.granularity_ns),
                ns2_ticks: choose(field, "rtt_estimator", self.rtt_estimator.as_deref(), "an RTT estimator", &[("rfc6298", false), ("ns2", true)])?,
                phase_ns: self.clock_phase_ns,
            },
            clock_phase_random: self.clock_phase_random,
            dupack_threshold: self.dupack_threshold,
            max_backoff: self.max_backoff,
            max_retries: self.max_retries.unwrap_or(u32::MAX),
            abc_limit: self.abc_limit,
            delayed_ack: self.delayed_ack,
            delack_timeout: Dur::from_ns(self.delack_timeout_ns),
            delack_segments: self.delack_segments,
            quickack: self.quickack,
            timestamps: self.timestamps,
            limited_transmit: self.limited_transmit,
            idle_restart: self.idle_restart,
            sack_blocks: self.sack_blocks,
            byte_counting: self.byte_counting,
            hystart: self.hystart,
            handshake: self.handshake,
            local_congestion: self.local_congestion,
            hstcp_lookup: choose(field, "hstcp_lookup", self.hstcp_lookup.as_deref(), "a lookup",
                &[("formula", HighSpeedLookup::Formula), ("table", HighSpeedLookup::Table), ("linux", HighSpeedLookup::TableAbove)])?,
            window_growth: self.window_growth,
            sack_recovery,
            sack_loss,
            newreno_recovery: choose(field, "newreno_recovery", self.newreno_recovery.as_deref(), "a NewReno recovery",
                &[("rfc6582", NewRenoRecovery::Rfc6582), ("ns2-1998", NewRenoRecovery::Ns2Flywheel)])?,
            timeout_ssthresh: choose(field, "timeout_ssthresh", self.timeout_ssthresh.as_deref(), "a timeout rule",
                &[("rfc5681", TimeoutSsthresh::Rfc5681), ("ns2", TimeoutSsthresh::Ns2), ("linux", TimeoutSsthresh::Linux)])?,
            exit_growth: self.exit_growth,
            lt_old_data: self.lt_old_data,
            ns2_sack_bytes: self.ns2_sack_bytes,
            ns2_ca_fraction: self.ns2_ca_fraction,
            ns2_fr_halving: self.ns2_fr_halving,
            send_jitter: Dur::from_ns(self.send_jitter_ns),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_takes_the_first_choice_by_default_and_names_the_allowed_ones() {
        let choices = [("rfc5681", 0), ("ns2", 1), ("linux", 2)];
        assert_eq!(choose("tcp", "timeout_ssthresh", None, "a timeout rule", &choices).unwrap(), 0);
        assert_eq!(choose("tcp", "timeout_ssthresh", Some("linux"), "a timeout rule", &choices).unwrap(), 2);
        match choose("tcp", "timeout_ssthresh", Some("bsd"), "a timeout rule", &choices) {
            Err(Error::Invalid { field, message }) => {
                assert_eq!(field, "tcp.timeout_ssthresh");
                assert_eq!(message, "'bsd' is not a timeout rule; allowed: rfc5681, ns2, linux");
            }
            other => panic!("{other:?}"),
        }
    }
}
