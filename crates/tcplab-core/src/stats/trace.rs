//! Connection traces, web100 style: a row per traced connection every
//! sampling interval, and (with `on_change`) a row whenever its cwnd,
//! ssthresh or state changes. With tracing off nothing is kept and the only
//! cost is one test per transmission.

use super::TraceRow;
use crate::cc::CongestionControl;
use crate::tcp::{Connection, State};
use crate::time::{Dur, Time};

struct ConnTrace {
    traced: bool,
    /// (cwnd, ssthresh, state) of the last row written on change.
    last_change: (u64, u64, State),
    /// snd_una at the last periodic sample.
    last_una: u64,
}

pub struct Tracer {
    /// The sampling interval, when sampling.
    pub interval: Option<Dur>,
    on_change: bool,
    /// Per application: whether its connections are traced.
    app_traced: Vec<bool>,
    names: Vec<String>,
    /// Per connection, once any application is traced.
    conns: Vec<ConnTrace>,
    pub rows: Vec<TraceRow>,
}

fn key(c: &Connection) -> (u64, u64, State) {
    (c.sender.cc.window(), c.sender.cc.ssthresh(), c.sender.state())
}

impl Tracer {
    pub fn new(interval: Option<Dur>, on_change: bool, app_traced: Vec<bool>, names: Vec<String>) -> Tracer {
        Tracer { interval, on_change, app_traced, names, conns: Vec::new(), rows: Vec::new() }
    }

    /// Whether any connection is traced (and periodic samples are due).
    pub fn sampling(&self) -> bool {
        self.interval.is_some() && self.app_traced.iter().any(|&t| t)
    }

    /// Connection `c` was created; it has not sent yet.
    pub fn on_open(&mut self, now: Time, c: &Connection) {
        if !self.app_traced.iter().any(|&t| t) {
            return;
        }
        let traced = self.app_traced[c.owner as usize];
        self.conns.push(ConnTrace { traced, last_change: key(c), last_una: 0 });
        if traced && self.on_change {
            self.row(now, c, None);
        }
    }

    /// Connection `c` has just transmitted.
    #[inline]
    pub fn on_sent(&mut self, now: Time, c: &Connection) {
        if !self.on_change {
            return;
        }
        let t = &mut self.conns[c.id as usize];
        if !t.traced {
            return;
        }
        let k = key(c);
        if k != t.last_change {
            t.last_change = k;
            self.row(now, c, None);
        }
    }

    /// A periodic sample of every traced connection still sending.
    pub fn sample(&mut self, now: Time, conns: &[Connection]) {
        let iv = self.interval.expect("sampling only with an interval");
        for c in conns {
            let t = &mut self.conns[c.id as usize];
            if !t.traced || c.sender.is_done() {
                continue;
            }
            let una = c.sender.snd_una();
            let tput = (una - t.last_una) as f64 * 8.0 / iv.as_secs_f64();
            t.last_una = una;
            self.row(now, c, Some(tput));
        }
    }

    fn row(&mut self, now: Time, c: &Connection, tput_bps: Option<f64>) {
        let s = &c.sender;
        let ss = s.cc.ssthresh();
        self.rows.push(TraceRow {
            flow: u64::from(c.id),
            app: self.names[c.owner as usize].clone(),
            t: now.as_secs_f64(),
            cwnd: s.cc.window(),
            ssthresh: (ss != u64::MAX).then_some(ss),
            srtt_s: s.rtt.srtt().map(Dur::as_secs_f64),
            rttvar_s: s.rtt.srtt().map(|_| s.rtt.rttvar().as_secs_f64()),
            rto_s: s.rtt.backed_off(s.backoff()).as_secs_f64(),
            flight: s.flight(),
            snd_una: s.snd_una(),
            snd_nxt: s.snd_nxt(),
            rwnd: s.rwnd(),
            tput_bps,
            state: s.state().name(),
        });
    }
}
