//! Connection establishment, as two-way TCP does it: the client (the data
//! receiver) sends SYN, the server answers SYN-ACK, and the client's ACK of
//! the SYN-ACK carries its opening message; the server starts sending when it
//! arrives. A SYN is retransmitted after the initial RTO with exponential
//! backoff (RFC 6298 section 5.7; 3 s in RFC 2988-era stacks, 1 s in RFC
//! 6298). The server retransmits an unanswered SYN-ACK the same way, and
//! the client answers every SYN-ACK with its opening message, which repairs a
//! lost one. A handshake round trip whose packets were not retransmitted gives
//! the server its first RTT sample (Karn's rule).

use crate::time::{Dur, Time};

/// The client side: SYN out, SYN-ACK in.
#[derive(Clone, Debug)]
pub struct Opener {
    rto: Dur,
    /// RFC 6298 2.5's upper bound, as for data.
    max_rto: Dur,
    max_backoff: u32,
    max_retries: u32,
    backoff: u32,
    deadline: Option<Time>,
    open: bool,
    /// No SYN-ACK came after `max_retries` retransmissions of the SYN.
    pub aborted: bool,
    pub syn_sent: u32,
}

impl Opener {
    pub fn new(initial_rto: Dur, max_rto: Dur, max_backoff: u32, max_retries: u32) -> Opener {
        Opener { rto: initial_rto, max_rto, max_backoff, max_retries, backoff: 0, deadline: None, open: false, aborted: false, syn_sent: 0 }
    }

    fn arm(&mut self, now: Time) {
        // Backed off up to rto_max (RFC 6298 2.5); an initial RTO above it
        // still times the first SYN (SYN-ACK).
        let f = 1u64 << self.backoff.min(62);
        self.deadline = Some(now + self.rto.saturating_mul(f).min(self.max_rto.max(self.rto)));
    }

    /// Send the first SYN.
    pub fn start(&mut self, now: Time) {
        self.syn_sent = 1;
        self.arm(now);
    }

    /// A SYN-ACK arrived: answer it with the opening message (every time).
    pub fn on_synack(&mut self) {
        self.open = true;
        self.deadline = None;
    }

    pub fn is_open(&self) -> bool {
        self.open
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadline
    }

    /// The SYN timer fired: back off and resend the SYN (returns true), or,
    /// after `max_retries` retransmissions, give up (RFC 9293 3.8.3).
    pub fn on_timeout(&mut self, now: Time) -> bool {
        self.deadline = None;
        if self.syn_sent > self.max_retries {
            self.aborted = true;
            return false;
        }
        self.backoff = (self.backoff + 1).min(self.max_backoff);
        self.syn_sent += 1;
        self.arm(now);
        true
    }
}

/// The server side: SYN in, SYN-ACK out, opening message in.
#[derive(Clone, Debug)]
pub struct Listener {
    rto: Dur,
    max_rto: Dur,
    max_backoff: u32,
    max_retries: u32,
    backoff: u32,
    /// No opening message came after `max_retries` retransmissions of the SYN-ACK.
    pub aborted: bool,
    deadline: Option<Time>,
    first_synack: Option<Time>,
    open: bool,
    pub synack_sent: u32,
    syn_seen: u32,
}

impl Listener {
    pub fn new(initial_rto: Dur, max_rto: Dur, max_backoff: u32, max_retries: u32) -> Listener {
        Listener { rto: initial_rto, max_rto, max_backoff, max_retries, backoff: 0, aborted: false, deadline: None, first_synack: None, open: false, synack_sent: 0, syn_seen: 0 }
    }

    fn arm(&mut self, now: Time) {
        // Backed off up to rto_max (RFC 6298 2.5); an initial RTO above it
        // still times the first SYN (SYN-ACK).
        let f = 1u64 << self.backoff.min(62);
        self.deadline = Some(now + self.rto.saturating_mul(f).min(self.max_rto.max(self.rto)));
    }

    /// A SYN arrived: returns whether to send a SYN-ACK.
    pub fn on_syn(&mut self, now: Time) -> bool {
        self.syn_seen += 1;
        if self.open || self.aborted {
            return false;
        }
        if self.first_synack.is_none() {
            self.first_synack = Some(now);
        }
        self.synack_sent += 1;
        self.arm(now);
        true
    }

    /// The opening message arrived. The first time, returns `Some(rtt)` where `rtt`
    /// is the handshake's RTT sample if nothing was retransmitted.
    pub fn on_open_message(&mut self, now: Time) -> Option<Option<Dur>> {
        if self.open {
            return None;
        }
        self.open = true;
        self.deadline = None;
        let clean = self.synack_sent == 1 && self.syn_seen == 1;
        Some(self.first_synack.filter(|_| clean).map(|t| now - t))
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadline
    }

    /// The SYN-ACK timer fired: back off and resend the SYN-ACK (returns
    /// true), or, after `max_retries` retransmissions, give up.
    pub fn on_timeout(&mut self, now: Time) -> bool {
        self.deadline = None;
        if self.synack_sent > self.max_retries {
            self.aborted = true;
            return false;
        }
        self.backoff = (self.backoff + 1).min(self.max_backoff);
        self.synack_sent += 1;
        self.arm(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syn_gives_up_after_max_retries_and_backs_off_to_the_max_rto() {
        let mut o = Opener::new(Dur::from_secs(1), Dur::from_secs(3), 6, 2);
        o.start(Time::ZERO);
        let mut expiries = vec![];
        while let Some(t) = o.poll_timeout() {
            expiries.push(t.as_secs_f64());
            if !o.on_timeout(t) {
                break;
            }
        }
        // Retransmitted at 1 s and 3 s (2 s: the backoff, within 3 s); the
        // third expiry, at 6 s (4 s capped at 3 s), gives up.
        assert_eq!(expiries, vec![1.0, 3.0, 6.0]);
        assert!(o.aborted && o.poll_timeout().is_none());
        assert_eq!(o.syn_sent, 3);
        let mut l = Listener::new(Dur::from_secs(1), Dur::from_secs(60), 6, 0);
        assert!(l.on_syn(Time::ZERO));
        assert!(!l.on_timeout(Time::ZERO + Dur::from_secs(1)), "no retransmission allowed");
        assert!(l.aborted && l.poll_timeout().is_none());
        assert!(!l.on_syn(Time::ZERO + Dur::from_secs(2)), "a closed listener answers no SYN");
    }

    #[test]
    fn syn_backoff_doubles() {
        let mut o = Opener::new(Dur::from_secs(3), Dur::from_secs(60), 6, 15);
        o.start(Time::ZERO);
        assert_eq!(o.poll_timeout(), Some(Time::ZERO + Dur::from_secs(3)));
        o.on_timeout(Time::ZERO + Dur::from_secs(3));
        assert_eq!(o.poll_timeout(), Some(Time::ZERO + Dur::from_secs(9)));
        assert_eq!(o.syn_sent, 2);
        o.on_synack();
        assert_eq!(o.poll_timeout(), None);
    }

    #[test]
    fn clean_handshake_gives_an_rtt_sample_and_a_repeat_gives_none() {
        let mut l = Listener::new(Dur::from_secs(1), Dur::from_secs(60), 6, 15);
        assert!(l.on_syn(Time::from_ns(10)));
        assert_eq!(l.on_open_message(Time::from_ns(110)), Some(Some(Dur::from_ns(100))));
        assert_eq!(l.on_open_message(Time::from_ns(120)), None);
        assert!(!l.on_syn(Time::from_ns(130)));
        let mut l = Listener::new(Dur::from_secs(1), Dur::from_secs(60), 6, 15);
        l.on_syn(Time::ZERO);
        l.on_timeout(Time::ZERO + Dur::from_secs(1));
        assert_eq!(l.on_open_message(Time::ZERO + Dur::from_secs(2)), Some(None), "Karn: no sample after a retransmission");
    }
}
