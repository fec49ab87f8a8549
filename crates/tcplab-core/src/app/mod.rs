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

#[derive(Clone, Debug)]
pub enum AppKind {
    /// One transfer.
    Bulk,
    /// Transfer after transfer, each on a new connection, the next one
    /// starting a think time after the previous one completes.
    Repeat { think: Think, count: Option<u64> },
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
}

impl App {
    /// A transfer completed at `now`: when should the next one start?
    pub fn next_start(&mut self, now: Time) -> Option<Time> {
        match &self.kind {
            AppKind::Bulk => None,
            AppKind::Repeat { think, count } => {
                if count.is_some_and(|c| self.transfers_started >= c) {
                    None
                } else {
                    Some(now + think.draw(&mut self.rng))
                }
            }
        }
    }
}
