//! Simulated time: integer nanoseconds, never floats.
//!
//! [`Time`] is an instant since the start of the run, [`Dur`] a span. Both wrap
//! a `u64` count of nanoseconds (enough for 584 years of simulated time).
//! Arithmetic that could overflow or go negative is checked: the `checked_*`
//! forms return `None`, the operators panic with a message naming the operands.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

/// A span of simulated time, in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    /// The latest a run without a stop time may go on: 10^8 s (about three
    /// years), the longest duration a scenario may give.
    pub const LONGEST_RUN: Time = Time(100_000_000 * 1_000_000_000);

    pub const fn from_ns(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn checked_add(self, d: Dur) -> Option<Time> {
        self.0.checked_add(d.0).map(Time)
    }
    /// The span from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_since(self, earlier: Time) -> Option<Dur> {
        self.0.checked_sub(earlier.0).map(Dur)
    }
    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns)
    }
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * 1_000_000_000)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn checked_add(self, d: Dur) -> Option<Dur> {
        self.0.checked_add(d.0).map(Dur)
    }
    pub fn checked_sub(self, d: Dur) -> Option<Dur> {
        self.0.checked_sub(d.0).map(Dur)
    }
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
    /// Time to put `bytes` on a wire of `rate_bps` bits per second, rounded up
    /// to the next nanosecond so a link is never faster than its rate.
    pub fn serialization(bytes: u64, rate_bps: u64) -> Dur {
        assert!(rate_bps > 0, "link rate must be positive");
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Dur(bits.div_ceil(rate_bps as u128) as u64)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        match self.checked_add(d) {
            Some(t) => t,
            None => panic!("simulated time overflow: {self} + {d}"),
        }
    }
}

impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        *self = *self + d;
    }
}

impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, earlier: Time) -> Dur {
        match self.checked_since(earlier) {
            Some(d) => d,
            None => panic!("negative span: {self} - {earlier}"),
        }
    }
}

impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        match self.checked_add(d) {
            Some(s) => s,
            None => panic!("duration overflow: {self} + {d}"),
        }
    }
}

impl Sub for Dur {
    type Output = Dur;
    fn sub(self, d: Dur) -> Dur {
        match self.checked_sub(d) {
            Some(s) => s,
            None => panic!("negative duration: {self} - {d}"),
        }
    }
}

impl Mul<u64> for Dur {
    type Output = Dur;
    fn mul(self, k: u64) -> Dur {
        match self.0.checked_mul(k) {
            Some(v) => Dur(v),
            None => panic!("duration overflow: {self} * {k}"),
        }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_constructors_agree() {
        assert_eq!(Dur::from_secs(1), Dur::from_ms(1000));
        assert_eq!(Dur::from_ms(1), Dur::from_us(1000));
        assert_eq!(Dur::from_us(1), Dur::from_ns(1000));
    }

    #[test]
    fn serialization_is_exact_or_rounded_up() {
        // 1500 bytes at 1.5 Mb/s: 8 ms exactly.
        assert_eq!(Dur::serialization(1500, 1_500_000), Dur::from_ms(8));
        // 1500 bytes at 1 Gb/s: 12 us exactly.
        assert_eq!(Dur::serialization(1500, 1_000_000_000), Dur::from_us(12));
        // 1500 bytes at 45 Mb/s: 266666.67 ns, rounded up.
        assert_eq!(Dur::serialization(1500, 45_000_000).as_ns(), 266_667);
    }

    #[test]
    fn checked_arithmetic() {
        assert_eq!(Time::MAX.checked_add(Dur::from_ns(1)), None);
        assert_eq!(Time::from_ns(5).checked_since(Time::from_ns(6)), None);
        assert_eq!(Time::from_ns(5).saturating_since(Time::from_ns(6)), Dur::ZERO);
        assert_eq!(Time::from_ns(7) - Time::from_ns(5), Dur::from_ns(2));
    }

    #[test]
    #[should_panic(expected = "negative span")]
    fn negative_span_panics() {
        let _ = Time::from_ns(1) - Time::from_ns(2);
    }
}
