//! Applications: what opens transfers, and when.

use crate::engine::rng::RngStream;
use crate::tcp::TcpConfig;
use crate::time::{Dur, Time};

/// A think-time distribution.
#[derive(Clone, Debug)]
pub enum Think {
    Constant(Dur),
    Uniform { min: Dur, max: Dur },
    Exponential { mean: Dur },
}

impl Think {
    pub fn draw(&self, rng: &mut RngStream) -> Dur {
        let ns = |x: f64| Dur::from_ns(x.round().max(0.0) as u64);
        match *self {
            Think::Constant(d) => d,
            Think::Uniform { min, max } => ns(rng.uniform(min.as_ns() as f64, max.as_ns() as f64)),
            Think::Exponential { mean } => ns(rng.exponential(mean.as_ns() as f64)),
        }
    }
}

/// An object-size distribution, in bytes.
#[derive(Clone, Debug)]
pub enum SizeDist {
    Constant(u64),
    /// Lognormal with the given median and shape sigma, capped at `max`.
    Lognormal { median: f64, sigma: f64, max: u64 },
    /// Pareto with the given median and tail index, capped at `max`: heavy-tailed
    /// as web object sizes are (Crovella and Bestavros 1996; Cunha, Bestavros
    /// and Crovella 1995).
    Pareto { median: f64, shape: f64, max: u64 },
    /// Inverse of a piecewise-linear CDF given as (bytes, probability) points.
    Empirical(Vec<(f64, f64)>),
}

impl SizeDist {
    pub fn draw(&self, rng: &mut RngStream) -> u64 {
        let x = match self {
            SizeDist::Constant(b) => return (*b).max(1),
            SizeDist::Lognormal { median, sigma, max } => (median.ln() + sigma * rng.normal()).exp().min(*max as f64),
            SizeDist::Pareto { median, shape, max } => {
                // x_m = median / 2^(1/a); X = x_m U^(-1/a).
                let xm = median / 2f64.powf(1.0 / shape);
                let u = 1.0 - rng.uniform01();
                (xm * u.powf(-1.0 / shape)).min(*max as f64)
            }
            SizeDist::Empirical(points) => {
                let u = rng.uniform01();
                let i = points.partition_point(|&(_, c)| c < u);
                if i == 0 {
                    points[0].0
                } else if i >= points.len() {
                    points[points.len() - 1].0
                } else {
                    let ((x0, c0), (x1, c1)) = (points[i - 1], points[i]);
                    if c1 > c0 {
                        x0 + (x1 - x0) * (u - c0) / (c1 - c0)
                    } else {
                        x1
                    }
                }
            }
        };
        (x.round() as u64).max(1)
    }
}

/// A web browser's page model (RFC 2415 section 2).
#[derive(Clone, Debug)]
pub struct WebConfig {
    /// HTTP/1.1's rough model: one connection carries the primary and every
    /// embedded object. Otherwise HTTP/1.0: one connection per object, the
    /// embedded objects fetched at once after the primary completes.
    pub http11: bool,
    pub embedded: u32,
    pub primary: SizeDist,
    pub object: SizeDist,
    pub think: Think,
    /// Pages to fetch; `None`: until the end of the run.
    pub pages: Option<u64>,
}

#[derive(Clone, Debug)]
pub enum AppKind {
    /// One transfer.
    Bulk,
    /// Transfer after transfer, each on a new connection, the next one
    /// starting a think time after the previous one completes.
    ///
    /// With `persistent`, each transfer is a request on the same connection
    /// when the next one follows at once (no think time), and each transfer
    /// is recorded as a one-object page.
    Repeat { think: Think, count: Option<u64>, persistent: bool },
    /// Page after page of web objects.
    Web(Box<WebConfig>),
}

/// A client that moves `size` bytes from `src` to `dst`.
pub struct App {
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub start: Time,
    /// Bytes per transfer (`None`: unbounded).
    pub size: Option<u64>,
    pub kind: AppKind,
    pub tcp: TcpConfig,
    pub rng: RngStream,
    pub transfers_started: u64,
    /// Bytes of the request a client sends when a connection opens (with a handshake).
    pub request_bytes: u32,
    pub pages_started: u64,
}

impl App {
    /// Whether transfers reuse one connection (a persistent repeat client).
    pub fn persistent(&self) -> bool {
        matches!(self.kind, AppKind::Repeat { persistent: true, .. })
    }

    /// Embedded objects per web page (0 for other applications).
    pub fn embedded_count(&self) -> u32 {
        match &self.kind {
            AppKind::Web(w) => w.embedded,
            _ => 0,
        }
    }

    /// A transfer completed at `now`: when should the next one start?
    pub fn next_start(&mut self, now: Time) -> Option<Time> {
        match &self.kind {
            AppKind::Bulk => None,
            AppKind::Web(w) => {
                if w.pages.is_some_and(|c| self.pages_started >= c) {
                    None
                } else {
                    Some(now + w.think.draw(&mut self.rng))
                }
            }
            AppKind::Repeat { think, count, .. } => {
                if count.is_some_and(|c| self.transfers_started >= c) {
                    None
                } else {
                    Some(now + think.draw(&mut self.rng))
                }
            }
        }
    }
}
