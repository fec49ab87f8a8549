//! Operation sequences on a sender and a receiver joined by an unreliable
//! path, with TCP's invariants checked after every step. The fuzz target
//! `tcp_ops` (in `fuzz/`) feeds it arbitrary bytes; tests replay what it found.
//!
//! The first bytes choose the configuration (controller, CUBIC's HyStart, initial window,
//! RTT timing with timestamps, quick ACKs at the start, byte or ACK counting,
//! restart after idle, delayed ACKs, SACK blocks, duplicate-ACK threshold,
//! limited transmit, a growing receive window, and local congestion: the path
//! out of the sender then holds at most a few segments, and a segment beyond
//! is a send stall);
//! each later byte is one operation: deliver, drop, duplicate or reorder a
//! data segment; deliver, drop, duplicate or corrupt an ACK (its
//! acknowledgement number moved anywhere, arbitrary SACK blocks); fire the
//! retransmission or delayed-ACK timer. After each step:
//! - the sender's own invariants hold ([`Sender::check_invariants`]): with
//!   SACK, `pipe` counts the bytes in flight as RFC 6675's scoreboard defines
//!   them; cwnd is at least one segment;
//! - `snd_una` never moves backwards;
//! - the receiver delivers each byte once and in order, and only bytes it received.

use super::config::{CcKind, NewRenoRecovery, SackLoss, SackRecovery, TcpConfig, TimeoutSsthresh};
use super::rtt::RttConfig;
use super::receiver::Receiver;
use super::sender::{Segment, Sender};
use crate::time::{Dur, Time};
use std::collections::VecDeque;

const MSS: u32 = 1000;
const TOTAL: u64 = 60_000;

/// Replay `data` as a configuration and a sequence of operations; an error names the first broken invariant.
pub fn run(data: &[u8]) -> Result<(), String> {
    if data.len() < 4 {
        return Ok(());
    }
    let cc = [CcKind::Tahoe, CcKind::Reno, CcKind::NewReno, CcKind::Sack, CcKind::HighSpeed, CcKind::Cubic][data[0] as usize % 6];
    let cfg = TcpConfig {
        cc,
        mss: MSS,
        iw_bytes: u64::from(1 + (data[1] & 15) % 10) * u64::from(MSS),
        timestamps: data[1] & 16 != 0,
        quickack: if data[1] & 32 != 0 { 16 } else { 0 },
        byte_counting: data[1] & 64 == 0,
        idle_restart: data[1] & 128 != 0,
        delayed_ack: data[2] & 1 == 1,
        sack_blocks: 1 + u32::from(data[2] >> 1) % 4,
        limited_transmit: data[2] & 8 != 0,
        dupack_threshold: 2 + u32::from(data[3]) % 3,
        max_window: 40 * u64::from(MSS),
        window_growth: data[2] & 16 != 0,
        local_congestion: data[3] & 128 != 0,
        sack_recovery: match data[2] >> 5 & 3 {
            0 if data[3] & 32 != 0 => SackRecovery::LinuxRateHalving,
            0 => SackRecovery::Rfc6675,
            1 => SackRecovery::Ns2Sack1 { stall_at_end: false },
            2 => SackRecovery::Ns2Sack1 { stall_at_end: true },
            _ => SackRecovery::Ns2Sack1v235,
        },
        // FACK with the scoreboard recoveries (rfc6675 and linux).
        sack_loss: if data[2] >> 5 & 3 == 0 && data[3] & 64 != 0 { SackLoss::Fack } else { SackLoss::Rfc6675 },
        newreno_recovery: if data[2] & 128 != 0 { NewRenoRecovery::Ns2Flywheel } else { NewRenoRecovery::Rfc6582 },
        timeout_ssthresh: match data[0] >> 1 & 3 {
            1 => TimeoutSsthresh::Ns2,
            2 => TimeoutSsthresh::Linux,
            _ => TimeoutSsthresh::Rfc5681,
        },
        exit_growth: data[0] & 8 != 0,
        lt_old_data: data[1] & 128 != 0 && data[2] & 8 != 0,
        // With ns-2's ticks, at a phase of 0, 0.25, 0.5 or 0.75 ms.
        rtt: RttConfig { ns2_ticks: data[0] & 64 != 0, phase_ns: u64::from(data[3] >> 2 & 3) * 250_000, ..Default::default() },
        ns2_ca_fraction: data[3] & 1 != 0,
        ns2_fr_halving: data[3] & 2 != 0,
        // HyStart (cubic only).
        hystart: data[1] & 48 == 48,
        // Giving up after 1 to 4 retransmissions, or after the default 15.
        max_retries: if data[0] & 128 != 0 { 1 + u32::from(data[0] >> 4 & 3) } else { 15 },
        ..Default::default()
    };
    // With local congestion, the sender's interface queue is the path, of 2 to 9 segments.
    let cap = if cfg.local_congestion { 2 + usize::from(data[3] >> 4 & 7) } else { usize::MAX };
    let room = |path: &VecDeque<Segment>| if cap == usize::MAX { u64::MAX } else { cap.saturating_sub(path.len()) as u64 };
    let mut tx = Sender::new(&cfg, Some(TOTAL));
    let mut rx = Receiver::new(&cfg, Some(TOTAL));
    let mut now = Time::ZERO;
    let mut out: Vec<Segment> = Vec::new();
    let mut path: VecDeque<Segment> = VecDeque::new();
    // ACKs on their way back: (ack, SACK blocks, advertised window).
    type AckOnWire = (u64, Vec<(u64, u64)>, u64);
    let mut back: VecDeque<AckOnWire> = VecDeque::new();
    let mut received = vec![false; TOTAL as usize];
    let (mut una, mut delivered) = (0u64, 0u64);
    tx.set_room(room(&path));
    tx.start(now, &mut out);
    path.extend(out.drain(..));
    let mut bytes = data[4..].iter().copied();
    while let Some(op) = bytes.next() {
        now += Dur::from_ms(1 + u64::from(op >> 4));
        let mut ack = None;
        tx.set_room(room(&path));
        match op % 12 {
            0..=2 => {
                if let Some(s) = path.pop_front() {
                    received[s.seq as usize..(s.seq + u64::from(s.len)) as usize].iter_mut().for_each(|b| *b = true);
                    ack = rx.on_data(now, s.seq, s.len);
                }
            }
            3 => drop(path.pop_front()),
            4 => {
                if let Some(&s) = path.front() {
                    path.push_back(s);
                }
            }
            5 => {
                if path.len() >= 2 {
                    path.swap(0, 1);
                }
            }
            6 | 7 => {
                if let Some((a, sack, wnd)) = back.pop_front() {
                    if cfg.window_growth {
                        tx.set_rwnd(wnd);
                    }
                    tx.on_ack(now, a, &sack, &mut out);
                }
            }
            8 => drop(back.pop_front()),
            9 => {
                if let Some(a) = back.front().cloned() {
                    back.push_back(a);
                }
            }
            10 => {
                // Corrupt the next ACK: move its number anywhere, give it arbitrary SACK blocks.
                let (x, y) = (u64::from(bytes.next().unwrap_or(0)), u64::from(bytes.next().unwrap_or(0)));
                let a = (x * 256 + y) * (TOTAL + 2 * u64::from(MSS)) / 65_536;
                let sack: Vec<(u64, u64)> = (0..y % 5).map(|k| (a + (x + k) * 137, a + (x + k) * 137 + y * 53)).collect();
                tx.on_ack(now, a, &sack, &mut out);
            }
            _ => {
                if let Some(d) = tx.poll_timeout() {
                    now = now.max(d);
                    tx.on_timeout(now, &mut out);
                }
                if let Some(d) = rx.poll_timeout() {
                    now = now.max(d);
                    ack = rx.on_timeout(now);
                }
            }
        }
        if let Some(a) = ack {
            let mut blocks = [(0, 0); 4];
            let n = rx.sack_blocks(&mut blocks);
            back.push_back((a, blocks[..n].to_vec(), rx.window()));
        }
        if tx.aborted() && !out.is_empty() {
            return Err(format!("{} segments sent after the sender gave up", out.len()));
        }
        if out.len() as u64 > room(&path) {
            return Err(format!("{} segments sent into room for {}", out.len(), room(&path)));
        }
        path.extend(out.drain(..));
        tx.check_invariants()?;
        if tx.snd_una() < una {
            return Err(format!("snd_una moved back from {una} to {}", tx.snd_una()));
        }
        una = tx.snd_una();
        let d = rx.delivered();
        if d < delivered || d > TOTAL {
            return Err(format!("delivery moved from {delivered} to {d}"));
        }
        if let Some(b) = (delivered..d).find(|&b| !received[b as usize]) {
            return Err(format!("byte {b} delivered but never received"));
        }
        delivered = d;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::run;

    /// A fixed stream of pseudo-random bytes (xorshift64) for operation sequences.
    fn bytes(mut x: u64) -> impl FnMut() -> u8 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        }
    }

    #[test]
    fn a_clean_transfer_holds_every_invariant() {
        // Deliver data and ACKs in turn until done, for each controller.
        for cc in 0..6u8 {
            let mut ops = vec![cc, 3, 0, 1];
            ops.extend(std::iter::repeat_n([0u8, 6], 400).flatten());
            assert_eq!(run(&ops), Ok(()));
        }
    }

    #[test]
    fn fuzz_regressions() {
        // A mid-segment ACK after a go-back: a retransmission ran past snd_max, off the SACK scoreboard.
        assert_eq!(run(include_bytes!("../../../../fuzz/regressions/tcp_ops-retransmission-past-snd_max")), Ok(()));
        // An ACK inside a segment: pipe counted the whole segment, acknowledged bytes included.
        assert_eq!(run(include_bytes!("../../../../fuzz/regressions/tcp_ops-pipe-of-a-partly-acked-segment")), Ok(()));
    }

    #[test]
    fn local_congestion_and_window_growth_hold_every_invariant() {
        // Config: sack, IW 10, window growth, local congestion with a path of
        // 2 + 3 segments; deliver and ACK in turn, with a timer now and then.
        for cc in 0..6u8 {
            let mut ops = vec![cc, 9, 16, 128 | (3 << 4)];
            ops.extend(std::iter::repeat_n([0u8, 0, 6, 6, 0, 6, 11], 200).flatten());
            assert_eq!(run(&ops), Ok(()));
        }
    }

    #[test]
    fn ns2_sack1_recovery_holds_every_invariant_under_random_operations() {
        // Both forms of ns-2's Sack1 recovery (config byte 2, bits 5-6), SACK
        // controller, 2,000 operation sequences from a fixed generator.
        let mut next = bytes(0x9e37_79b9_7f4a_7c15);
        for i in 0..2000u32 {
            let mode = if i % 2 == 0 { 1u8 << 5 } else { 2 << 5 };
            let mut ops = vec![3, next() % 10, mode | (next() & 0x1f), next() & 0x7f];
            ops.extend((0..300).map(|_| next()));
            assert_eq!(run(&ops), Ok(()), "sequence {i}: {ops:?}");
        }
    }

    #[test]
    fn fack_holds_every_invariant_under_random_operations() {
        // FACK (config byte 3, bit 6) with RFC 6675's recovery and Linux's
        // rate-halving (byte 3, bit 5), over the three SACK controllers.
        let mut next = bytes(0x6a09_e667_f3bc_c908);
        for i in 0..3000u32 {
            let cc = [3u8, 4, 5][(i % 3) as usize];
            let halving = if i / 3 % 2 == 0 { 0 } else { 32 };
            let mut ops = vec![cc, next() % 10, next() & 0x9f, 64 | halving | (next() & 0x9f)];
            ops.extend((0..300).map(|_| next()));
            assert_eq!(run(&ops), Ok(()), "sequence {i}: {ops:?}");
        }
    }

    #[test]
    fn ns2_flywheel_newreno_holds_every_invariant_under_random_operations() {
        // NewReno (controller 2) with ns-2's flywheel recovery (config byte 2, bit 7).
        let mut next = bytes(0x2545_f491_4f6c_dd1d);
        for i in 0..2000u32 {
            let mut ops = vec![2, next() % 10, 128 | (next() & 0x7f), next() & 0x7f];
            ops.extend((0..300).map(|_| next()));
            assert_eq!(run(&ops), Ok(()), "sequence {i}: {ops:?}");
        }
    }

    #[test]
    fn timestamps_quick_acks_ack_counting_and_idle_restart_hold_every_invariant_under_random_operations() {
        // Config byte 1, bits 4-7 (timestamps, 16 quick ACKs, counting ACKs
        // instead of bytes, restart after idle) in every combination, over
        // every controller, with delayed ACKs half the time.
        let mut next = bytes(0xd1b5_4a32_d192_ed03);
        for i in 0..3000u32 {
            let flags = (i % 16) as u8;
            let mut ops = vec![(i / 16 % 6) as u8, (flags << 4) | (next() % 10), next(), next()];
            ops.extend((0..300).map(|_| next()));
            assert_eq!(run(&ops), Ok(()), "sequence {i}: {ops:?}");
        }
    }

    #[test]
    fn an_ack_of_data_never_sent_is_ignored() {
        // Controller sack, IW 1; deliver the first segment, then an ACK corrupted far past snd_max.
        assert_eq!(run(&[3, 0, 0, 1, 0, 10, 255, 255, 6, 6, 11]), Ok(()));
    }
}
