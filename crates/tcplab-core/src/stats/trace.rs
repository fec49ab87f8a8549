//! Connection traces, web100 style: a row per traced connection every
//! sampling interval, and (with `on_change`) a row whenever its cwnd,
//! ssthresh or state changes. With `web100`, each periodic sample also
//! writes a row of RFC 4898 / web100 variables ([`Web100Row`]). With
//! tracing off nothing is kept and the only cost is one test per
//! transmission.

use super::{TraceRow, Web100Row};
use crate::cc::CongestionControl;
use crate::tcp::{Connection, State};
use crate::time::{Dur, Time};
use std::sync::Arc;

/// The most periodic samples a run takes of each traced connection (the
/// scenario's checks refuse an interval that would take more by the stop
/// time; a run without one stops with an error when the next would pass it).
pub const MAX_SAMPLES: u64 = 10_000_000;

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
    /// Whether any application is.
    any_traced: bool,
    /// The applications' names, shared by their rows (no allocation per sample).
    names: Vec<Arc<str>>,
    /// Per connection, once any application is traced.
    conns: Vec<ConnTrace>,
    pub rows: Vec<TraceRow>,
    /// Also write web100 rows at each periodic sample.
    web100: bool,
    pub web100_rows: Vec<Web100Row>,
}

fn key(c: &Connection) -> (u64, u64, State) {
    (c.sender.cwnd(), c.sender.cc.ssthresh(), c.sender.state())
}

impl Tracer {
    pub fn new(interval: Option<Dur>, on_change: bool, app_traced: Vec<bool>, names: Vec<String>) -> Tracer {
        let names = names.into_iter().map(Arc::from).collect();
        let any_traced = app_traced.iter().any(|&t| t);
        Tracer { interval, on_change, app_traced, any_traced, names, conns: Vec::new(), rows: Vec::new(), web100: false, web100_rows: Vec::new() }
    }

    /// Write web100 rows at each periodic sample too.
    pub fn with_web100(mut self, on: bool) -> Tracer {
        self.web100 = on;
        self
    }

    /// Whether any connection is traced (and periodic samples are due).
    /// Whether any application's connections are traced (the tracer then
    /// keeps a record per connection).
    pub fn follows_connections(&self) -> bool {
        self.any_traced
    }

    pub fn sampling(&self) -> bool {
        self.interval.is_some() && self.any_traced
    }

    /// Connection `c` was created; it has not sent yet.
    pub fn on_open(&mut self, now: Time, c: &Connection) {
        // Once per connection: a scan of the applications here was quadratic in them.
        if !self.any_traced {
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
            if self.web100 {
                self.web100_row(now, c, tput);
            }
        }
    }

    fn web100_row(&mut self, now: Time, c: &Connection, tput_bps: f64) {
        let s = &c.sender;
        let st = &s.stats;
        let ss = s.cc.ssthresh();
        let ms = |d: Dur| d.as_secs_f64() * 1e3;
        self.web100_rows.push(Web100Row {
            flow: u64::from(c.id),
            app: self.names[c.owner as usize].clone(),
            t: now.as_secs_f64(),
            cur_cwnd: s.cwnd(),
            cur_ssthresh: (ss != u64::MAX).then_some(ss),
            smoothed_rtt: s.rtt.srtt().map(ms),
            sample_rtt: s.rtt.last_sample().map(ms),
            cur_rwin_rcvd: s.rwnd(),
            snd_nxt: s.snd_nxt(),
            snd_max: s.snd_una() + s.flight(),
            snd_una: s.snd_una(),
            pkts_out: st.data_pkts + u64::from(c.synack_sent()),
            data_pkts_out: st.data_pkts,
            ack_pkts_in: st.acks_in,
            dup_acks_in: st.dupacks,
            sacks_rcvd: st.sack_acks,
            pkts_retrans: st.retx_pkts,
            timeouts: st.timeouts,
            slow_start: st.ss_acks,
            cong_avoid: st.ca_acks,
            congestion_signals: st.fast_retx + st.timeouts + st.cwr_entries,
            send_stall: st.send_stalls,
            instantaneous_bw: tput_bps,
            state: s.state().name(),
        });
    }

    fn row(&mut self, now: Time, c: &Connection, tput_bps: Option<f64>) {
        let s = &c.sender;
        let ss = s.cc.ssthresh();
        self.rows.push(TraceRow {
            flow: u64::from(c.id),
            app: self.names[c.owner as usize].clone(),
            t: now.as_secs_f64(),
            cwnd: s.cwnd(),
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
