//! Lazily cancelled timers (as htsim cancels them): a component that wants a
//! wake-up arms its [`TimerSlot`] with a deadline; at most one event per slot
//! is live in the queue, named by a generation number, and moving a deadline
//! later costs nothing until the live event fires and finds it stale.

use crate::time::Time;

#[derive(Copy, Clone, Debug, Default)]
pub struct TimerSlot {
    gen: u32,
    /// Events of this slot in the queue, the live one and the superseded
    /// ones not yet fired.
    queued: u32,
    scheduled: Option<Time>,
}

impl TimerSlot {
    /// The component wants a wake-up at `deadline`: returns the time and
    /// generation of a new event to schedule, or `None` when the live event
    /// comes first (or no wake-up is wanted).
    #[inline]
    pub fn arm(&mut self, deadline: Option<Time>) -> Option<(Time, u32)> {
        let d = deadline?;
        if self.scheduled.is_some_and(|s| s <= d) {
            return None;
        }
        self.gen = self.gen.wrapping_add(1);
        self.queued += 1;
        self.scheduled = Some(d);
        Some((d, self.gen))
    }

    /// Whether a wake-up is scheduled and has not fired.
    #[inline]
    pub fn is_armed(&self) -> bool {
        self.scheduled.is_some()
    }

    /// Whether no event of this slot is in the queue, live or superseded:
    /// its generations may then start again, as a new slot's.
    #[inline]
    pub fn is_clear(&self) -> bool {
        self.queued == 0
    }

    /// An event of generation `gen` fired: whether it is the live one.
    #[inline]
    pub fn fire(&mut self, gen: u32) -> bool {
        self.queued -= 1;
        if self.gen != gen {
            return false;
        }
        self.scheduled = None;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_deadline_supersedes_and_a_later_one_waits() {
        let mut s = TimerSlot::default();
        let (t1, g1) = s.arm(Some(Time::from_ns(100))).unwrap();
        assert_eq!(t1, Time::from_ns(100));
        assert_eq!(s.arm(Some(Time::from_ns(150))), None, "the live event comes first");
        let (_, g2) = s.arm(Some(Time::from_ns(50))).unwrap();
        assert!(!s.is_clear());
        assert!(s.fire(g2));
        assert!(!s.is_armed());
        assert!(!s.is_clear(), "the superseded event is still queued");
        assert!(!s.fire(g1), "superseded");
        assert!(s.is_clear());
        assert_eq!(s.arm(None), None);
        assert!(s.is_clear());
    }

    #[test]
    fn a_timer_slot_stays_the_size_of_its_deadline_and_generation() {
        assert_eq!(std::mem::size_of::<TimerSlot>(), 24);
    }
}
