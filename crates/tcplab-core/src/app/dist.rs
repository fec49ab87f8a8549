//! Random distributions of the workloads: think times and object sizes.

use crate::engine::rng::RngStream;
use crate::time::Dur;

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
