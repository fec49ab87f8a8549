//! A TCP connection: the server's [`Sender`], the client's [`Receiver`],
//! the handshake, the client's later messages on the open connection, and
//! every timer of theirs.
//!
//! A connection takes an arriving packet or a timer firing and, through the
//! [`Wire`] its caller provides, transmits packets and asks for timer
//! wake-ups; it returns a [`ConnEvent`] for its owner (the application)
//! when one happens. Timers are cancelled lazily by generation
//! ([`TimerSlot`]): each kind has at most one live wake-up.
//!
//! Data flows from the server (the sender) to the client (the receiver).
//! With a handshake, the client sends SYN, the server answers SYN-ACK, and
//! the client's ACK of it carries its opening message, after which the
//! server sends. The client may later send further messages on the open
//! connection ([`Connection::exchange`]), each answered by a given number of
//! reply bytes; it resends an unanswered one after an RTO, backing off. The
//! client sends FIN with the ACK that completes the last reply, and the
//! server answers with a close.

use std::collections::VecDeque;
use super::config::TcpConfig;
use super::handshake::{Listener, Opener};
use super::receiver::Receiver;
use super::sender::{Segment, Sender};
use crate::engine::TimerSlot;
use crate::net::{Packet, PacketKind, RouteHead, MAX_SACK};
use crate::time::{Dur, Time};

/// The timers of a connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The sender's retransmission timer.
    Rto,
    /// The receiver's delayed-ACK timer.
    DelAck,
    /// The client's SYN retransmission.
    Syn,
    /// The server's SYN-ACK retransmission.
    SynAck,
    /// The client's retransmission of an unanswered message.
    Message,
    /// The data segments held back by `send_jitter` leave.
    Release,
}

/// What a connection tells its owner.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConnEvent {
    /// The client has every byte asked for so far. The owner may ask for
    /// more ([`Connection::exchange`]) before [`Connection::after_event`].
    Complete,
}

/// What a connection needs from the rest of the simulation.
pub trait Wire {
    fn now(&self) -> Time;
    /// Put a packet (with its SACK blocks) into the network now; `head` is
    /// the head of its route.
    fn transmit(&mut self, p: Packet, head: RouteHead, sack: &[(u64, u64)]);
    /// Wake connection `conn`'s `timer` at `at`, with generation `gen`.
    fn wake(&mut self, conn: u32, timer: Timer, at: Time, gen: u32);
    /// The connection's sender has just transmitted (an instrumentation hook).
    fn sent(&mut self, conn: &Connection);
    /// A scratch buffer for the sender's segments, given back with [`Wire::put_segments`].
    fn take_segments(&mut self) -> Vec<Segment>;
    fn put_segments(&mut self, buf: Vec<Segment>);
    /// How many packets of `bytes` wire bytes `link` (the first link of the
    /// data route: the sending host's interface) accepts now without a drop.
    fn room(&mut self, link: u32, bytes: u32) -> u64;
}

struct Handshake {
    opener: Opener,
    listener: Listener,
    /// Messages after the opening one: the last one the client sent and the
    /// last one the server answered, the reply bytes and size of the
    /// outstanding one, and the client's retransmission of it.
    sent: u32,
    answered: u32,
    reply: u64,
    message_bytes: u32,
    deadline: Option<Time>,
    backoff: u32,
    /// Retransmissions of the outstanding message, and how many the
    /// connection makes before it gives up ([`TcpConfig::max_retries`]).
    retries: u32,
    max_retries: u32,
    message_timer: TimerSlot,
    /// Bytes delivered when the outstanding message was sent: the reply has
    /// begun once data beyond it arrives.
    mark: u64,
    syn_timer: TimerSlot,
    synack_timer: TimerSlot,
    /// The opening message's size.
    open_bytes: u32,
    client_fin: bool,
    closed: bool,
    /// Bytes of client messages the server has taken in (each once): what
    /// its packets acknowledge in a capture.
    client_bytes: u64,
}

/// The fields are in the order of use: what every packet's handling reads,
/// then the client's side (read for data), then the server's (read for
/// ACKs), so that a prefetch of a data packet's connection can stop at the
/// end of the receiver ([`Connection::CLIENT_SIDE_BYTES`]) and one of an
/// ACK's can skip it ([`Connection::prefetch_server_side`]).
#[repr(C)]
pub struct Connection {
    pub id: u32,
    /// The owner's number (the application's index).
    pub owner: u32,
    data_route: u32,
    ack_route: u32,
    /// The heads of the data and ACK routes: each packet sent reads them.
    pub heads: (RouteHead, RouteHead),
    header: u32,
    /// Linux-like local congestion: the sender sees its interface queue's room.
    local_congestion: bool,
    /// ACKs carry the receiver's (growing) window.
    window_growth: bool,
    reported_done: bool,
    /// The connection gave up (RFC 9293 section 3.8.3's R2: a segment, SYN,
    /// SYN-ACK or message retransmitted `max_retries` times unanswered) and
    /// is closed: it sends nothing more and ignores what arrives.
    aborted: bool,
    /// The owner's data about this connection.
    pub tag: u64,
    pub start: Time,
    rto: TimerSlot,
    delack: TimerSlot,
    hs: Option<Box<Handshake>>,
    /// The ACK held back while the owner reacts to [`ConnEvent::Complete`].
    held_ack: Option<Option<u64>>,
    /// Replies asked for while an earlier one was still arriving, as (the
    /// byte offset that ends it, its tag), oldest first: each completes on
    /// its own ([`Connection::exchange`]). Boxed: one pointer, not a
    /// `VecDeque`'s four words, in every connection's first lines.
    #[allow(clippy::box_collection)]
    marks: Option<Box<VecDeque<(u64, u64)>>>,
    /// With `send_jitter`, the data segments waiting to leave (boxed: a
    /// pointer in every connection, the queue only where it is used).
    jitter: Option<Box<Jitter>>,
    /// Bytes asked for in all (`None`: unbounded).
    pub size: Option<u64>,
    pub receiver: Receiver,
    pub sender: Sender,
}

/// Data segments held back by `send_jitter` (ns-2's `overhead_`).
struct Jitter {
    max_ns: u64,
    key: u64,
    draws: u64,
    queue: VecDeque<Packet>,
    timer: TimerSlot,
}

impl Connection {
    /// The bytes from the start of a connection to the end of its
    /// receiver: all that a data packet's arrival reads.
    pub const CLIENT_SIDE_BYTES: usize = std::mem::offset_of!(Connection, receiver) + std::mem::size_of::<Receiver>();

    /// A hint: start loading what the server's side reads (an ACK's
    /// arrival, the retransmission timer) of the connection at `p`: the
    /// fields every packet's handling reads and the sender, not the receiver
    /// between them (two to three lines fewer than the whole connection).
    #[inline(always)]
    pub fn prefetch_server_side(p: *const Connection) {
        crate::engine::prefetch_bytes(p, std::mem::offset_of!(Connection, receiver));
        let sender = p.cast::<u8>().wrapping_add(std::mem::offset_of!(Connection, sender));
        crate::engine::prefetch_bytes(sender, std::mem::size_of::<Sender>());
    }

    /// A connection whose server will send `size` bytes (`None`: unbounded)
    /// once open, over routes `data` (server to client) and `ack`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(id: u32, owner: u32, tag: u64, data: u32, ack: u32, cfg: &TcpConfig, size: Option<u64>, open_bytes: u32, now: Time) -> Connection {
        let hs = cfg.handshake.then(|| {
            Box::new(Handshake {
                opener: Opener::new(cfg.rtt.initial_rto, cfg.rtt.max_rto, cfg.max_backoff, cfg.max_retries),
                listener: Listener::new(cfg.rtt.initial_rto, cfg.rtt.max_rto, cfg.max_backoff, cfg.max_retries),
                sent: 1,
                answered: 1,
                reply: 0,
                message_bytes: 0,
                deadline: None,
                backoff: 0,
                retries: 0,
                max_retries: cfg.max_retries,
                message_timer: TimerSlot::default(),
                mark: 0,
                syn_timer: TimerSlot::default(),
                synack_timer: TimerSlot::default(),
                open_bytes,
                client_fin: false,
                closed: false,
                client_bytes: 0,
            })
        });
        Connection {
            id,
            owner,
            tag,
            data_route: data,
            ack_route: ack,
            heads: (RouteHead::NONE, RouteHead::NONE),
            header: cfg.header,
            local_congestion: cfg.local_congestion,
            window_growth: cfg.window_growth,
            start: now,
            sender: Sender::new(cfg, size),
            receiver: Receiver::new(cfg, size),
            rto: TimerSlot::default(),
            delack: TimerSlot::default(),
            hs,
            reported_done: false,
            aborted: false,
            held_ack: None,
            marks: None,
            jitter: None,
            size,
        }
    }

    /// Hold data segments back a random time, uniform in [0, `max`], from
    /// each opportunity to send; `key` keys this connection's draws.
    pub fn set_send_jitter(&mut self, max: Dur, key: u64) {
        self.jitter = Some(Box::new(Jitter { max_ns: max.as_ns(), key, draws: 0, queue: VecDeque::new(), timer: TimerSlot::default() }));
    }

    /// The connection gave up on an unanswered retransmission (see `aborted`).
    pub fn aborted(&self) -> bool {
        self.aborted
    }

    pub fn has_handshake(&self) -> bool {
        self.hs.is_some()
    }
    /// SYNs the client sent (0 without a handshake).
    pub fn syn_sent(&self) -> u32 {
        self.hs.as_ref().map_or(0, |h| h.opener.syn_sent)
    }
    pub fn synack_sent(&self) -> u32 {
        self.hs.as_ref().map_or(0, |h| h.listener.synack_sent)
    }
    /// The transfer asked for last has completed and its owner has asked
    /// for no more ([`Connection::exchange`]).
    pub fn finished(&self) -> bool {
        self.reported_done && self.receiver.done_at().is_some()
    }

    /// Nothing of the connection is queued: no timer event (live or
    /// superseded), no ACK held
    /// back, no segment waiting for its send jitter. With none of its
    /// packets in the network as well, no event can reach it again.
    pub fn idle(&self) -> bool {
        let hs_idle = self.hs.as_ref().is_none_or(|h| h.message_timer.is_clear() && h.syn_timer.is_clear() && h.synack_timer.is_clear());
        let jitter_idle = self.jitter.as_ref().is_none_or(|j| j.queue.is_empty() && j.timer.is_clear());
        self.rto.is_clear() && self.delack.is_clear() && self.held_ack.is_none() && hs_idle && jitter_idle
    }

    /// Both sides closed (handshake only).
    pub fn closed(&self) -> bool {
        self.hs.as_ref().is_some_and(|h| h.closed)
    }

    /// Open: the client's SYN, or (without a handshake) the server's first window.
    pub fn open<W: Wire>(&mut self, w: &mut W) {
        if let Some(hs) = self.hs.as_mut() {
            hs.opener.start(w.now());
            self.send_control(w, PacketKind::Syn, 0, 0);
            self.sync_handshake(w);
            return;
        }
        self.run_sender(w, |s, now, buf| s.start(now, buf));
    }

    /// The link this connection's answer to a delivered packet of `kind`
    /// most likely goes out on (a prefetch hint): data is answered on the
    /// ACK route, anything else on the data route.
    #[inline]
    pub fn reply_link(&self, kind: PacketKind) -> u32 {
        if kind == PacketKind::Data { self.heads.1.first } else { self.heads.0.first }
    }

    /// The link what `timer` sends when it fires goes out on (a prefetch
    /// hint): the server's timers send on the data route, the client's on
    /// the ACK route.
    #[inline]
    pub fn timer_link(&self, timer: Timer) -> u32 {
        match timer {
            Timer::Rto | Timer::SynAck | Timer::Release => self.heads.0.first,
            Timer::DelAck | Timer::Syn | Timer::Message => self.heads.1.first,
        }
    }

    /// A packet of this connection arrived at its end of the route.
    #[inline]
    pub fn on_packet<W: Wire>(&mut self, w: &mut W, p: &Packet, sack: &[(u64, u64)]) -> Option<ConnEvent> {
        // After the connection gave up, its parts ignore what arrives: the
        // sender has nothing outstanding, the listener answers no SYN, and
        // a SYN-ACK or message is dropped here (no check on the data path).
        match p.kind {
            PacketKind::Data => return self.on_data(w, p),
            PacketKind::Ack => {
                if self.window_growth {
                    self.sender.set_rwnd(p.window());
                }
                self.run_sender(w, |s, now, buf| s.on_ack(now, p.ack, sack, buf));
                if p.fin {
                    self.send_control(w, PacketKind::Close, 0, 0);
                }
            }
            PacketKind::Syn => {
                let hs = self.hs.as_mut().expect("SYN on a connection with a handshake");
                if hs.listener.on_syn(w.now()) {
                    self.send_control(w, PacketKind::SynAck, 0, 0);
                }
                self.sync_handshake(w);
            }
            PacketKind::SynAck if self.aborted => {}
            PacketKind::SynAck => {
                let hs = self.hs.as_mut().expect("SYN-ACK on a connection with a handshake");
                hs.opener.on_synack();
                let bytes = hs.open_bytes;
                self.send_control(w, PacketKind::ClientData, bytes, 0);
                self.sync_handshake(w);
            }
            PacketKind::ClientData if self.aborted => {}
            PacketKind::ClientData => self.on_message(w, p.seq, p.ack, p.len),
            PacketKind::Close => {
                if let Some(hs) = self.hs.as_mut() {
                    hs.closed = true;
                }
            }
        }
        None
    }

    /// After the owner reacted to an event: send the ACK held back.
    pub fn after_event<W: Wire>(&mut self, w: &mut W) {
        if let Some(ack) = self.held_ack.take() {
            self.ack_data(w, ack);
        }
    }

    fn on_data<W: Wire>(&mut self, w: &mut W, p: &Packet) -> Option<ConnEvent> {
        let ack = self.receiver.on_data(w.now(), p.seq, p.len);
        if let Some(hs) = self.hs.as_mut() {
            // The reply to an outstanding message has begun.
            if hs.deadline.is_some() && p.seq + u64::from(p.len) > hs.mark {
                hs.deadline = None;
            }
        }
        if !self.reported_done && self.receiver.done_at().is_some() {
            // The receiver counts to the end of the oldest reply due. With
            // replies pipelined behind it, each one that ends at or before the
            // bytes now delivered is complete, and the owner hears of the last
            // (the earlier ones completed at the same instant); the receiver
            // then counts on to the next one's end.
            self.reported_done = true;
            if let Some(marks) = self.marks.as_mut() {
                let got = self.receiver.delivered();
                while let Some(&(_, tag)) = marks.front().filter(|&&(end, _)| end <= got) {
                    self.tag = tag;
                    marks.pop_front();
                }
                if let Some(&(end, _)) = marks.front() {
                    self.receiver.extend_to(end);
                    self.reported_done = false;
                }
            }
            self.held_ack = Some(ack);
            return Some(ConnEvent::Complete);
        }
        self.ack_data(w, ack);
        None
    }

    /// The client ACKs data; it closes with the ACK that completes the
    /// connection's last transfer.
    fn ack_data<W: Wire>(&mut self, w: &mut W, ack: Option<u64>) {
        let done = self.reported_done && self.receiver.done_at().is_some();
        let fin = match self.hs.as_mut() {
            Some(hs) if done && !hs.client_fin => {
                hs.client_fin = true;
                true
            }
            _ => false,
        };
        if let Some(a) = ack {
            self.send_ack(w, a, fin);
        }
        self.sync_delack(w);
    }

    /// The client asks, on this open connection, for `reply` more bytes with
    /// a message of `bytes` bytes that carries its cumulative ACK, and
    /// resends it after an RTO until the reply begins. Without a handshake
    /// messages are not modelled: the server writes the reply at once.
    ///
    /// `tag` becomes the connection's tag. Without a handshake, a reply may
    /// be asked for while the previous one is still arriving (pipelined, as
    /// a persistent web client does): each then completes on its own, in
    /// order, with its own tag.
    pub fn exchange<W: Wire>(&mut self, w: &mut W, bytes: u32, reply: u64, tag: u64) {
        if self.aborted {
            return; // closed: nothing more goes out
        }
        let now = w.now();
        match self.size {
            Some(end) if !self.reported_done && self.hs.is_none() => {
                // The previous reply is still arriving: this one is due after it.
                let marks = self.marks.get_or_insert_with(Default::default);
                if marks.is_empty() {
                    marks.push_back((end, self.tag));
                }
                marks.push_back((end + reply, tag));
            }
            _ => {
                self.tag = tag;
                self.reported_done = false;
                self.receiver.extend(reply);
            }
        }
        self.size = self.size.map(|s| s + reply);
        let Some(hs) = self.hs.as_mut() else {
            self.run_sender(w, |s, now, buf| s.write(now, reply, buf));
            return;
        };
        hs.sent += 1;
        hs.reply = reply;
        hs.message_bytes = bytes;
        hs.mark = self.receiver.delivered();
        hs.backoff = 0;
        hs.retries = 0;
        hs.deadline = Some(now + self.sender.rtt.rto().max(Dur::from_ms(1)));
        let id = u64::from(hs.sent);
        let ack = self.receiver.piggyback_ack();
        self.send_message(w, bytes, id, ack);
        self.sync_handshake(w);
        self.sync_delack(w);
    }

    /// A client message reached the server: the opening one starts the
    /// sender; a later one carries an ACK, then is answered once.
    fn on_message<W: Wire>(&mut self, w: &mut W, id: u64, ack: u64, len: u32) {
        let now = w.now();
        let hs = self.hs.as_mut().expect("client data on a connection with a handshake");
        if id > 1 {
            if ack > self.sender.snd_una() {
                self.run_sender(w, |s, now, buf| s.on_ack(now, ack, &[], buf));
            }
            let hs = self.hs.as_mut().expect("handshake");
            if id as u32 > hs.answered {
                hs.answered = id as u32;
                hs.client_bytes += u64::from(len);
                let reply = hs.reply;
                self.run_sender(w, |s, now, buf| s.write(now, reply, buf));
            }
            return;
        }
        if let Some(sample) = hs.listener.on_open_message(now) {
            hs.client_bytes += u64::from(len);
            if let Some(r) = sample {
                self.sender.rtt.sample(now, r);
                if let Some(srtt) = self.sender.rtt.srtt() {
                    use crate::cc::CongestionControl;
                    self.sender.cc.on_rtt(srtt);
                }
            }
            self.run_sender(w, |s, now, buf| s.start(now, buf));
        }
        self.sync_handshake(w);
    }

    /// A timer of this connection fired with generation `gen`.
    pub fn on_timer<W: Wire>(&mut self, w: &mut W, timer: Timer, gen: u32) {
        let now = w.now();
        // After the connection gave up, no part of it has a deadline: a
        // timer still queued finds nothing due.
        match timer {
            Timer::Rto => {
                if !self.rto.fire(gen) {
                    return;
                }
                match self.sender.poll_timeout() {
                    None => {}
                    Some(d) if d > now => self.sync_rto(w),
                    Some(_) => {
                        self.run_sender(w, |s, now, buf| s.on_timeout(now, buf));
                        self.aborted = self.sender.aborted();
                    }
                }
            }
            Timer::DelAck => {
                if !self.delack.fire(gen) {
                    return;
                }
                match self.receiver.poll_timeout() {
                    None => {}
                    Some(d) if d > now => self.sync_delack(w),
                    Some(_) => {
                        if let Some(a) = self.receiver.on_timeout(now) {
                            self.send_ack(w, a, false);
                        }
                    }
                }
            }
            Timer::Syn => {
                let hs = self.hs.as_mut().expect("handshake timer");
                if !hs.syn_timer.fire(gen) {
                    return;
                }
                if hs.opener.poll_timeout().is_some_and(|d| d <= now) {
                    if hs.opener.on_timeout(now) {
                        self.send_control(w, PacketKind::Syn, 0, 0);
                    } else {
                        self.aborted = true;
                        return;
                    }
                }
                self.sync_handshake(w);
            }
            Timer::SynAck => {
                let hs = self.hs.as_mut().expect("handshake timer");
                if !hs.synack_timer.fire(gen) {
                    return;
                }
                if hs.listener.poll_timeout().is_some_and(|d| d <= now) {
                    if hs.listener.on_timeout(now) {
                        self.send_control(w, PacketKind::SynAck, 0, 0);
                    } else {
                        self.aborted = true;
                        return;
                    }
                }
                self.sync_handshake(w);
            }
            Timer::Release => {
                let Some(j) = self.jitter.as_mut() else { return };
                if !j.timer.fire(gen) {
                    return;
                }
                if self.aborted {
                    j.queue.clear();
                    return;
                }
                // ns-2's delayed send (`send_much(1, ...)`): everything held back goes now.
                while let Some(p) = j.queue.pop_front() {
                    w.transmit(p, self.heads.0, &[]);
                }
            }
            Timer::Message => {
                let hs = self.hs.as_mut().expect("message timer");
                if !hs.message_timer.fire(gen) {
                    return;
                }
                if hs.deadline.is_some_and(|d| d <= now) {
                    if hs.retries >= hs.max_retries {
                        hs.deadline = None;
                        self.aborted = true;
                        return;
                    }
                    hs.retries += 1;
                    hs.backoff = (hs.backoff + 1).min(6);
                    let rto = self.sender.rtt.backed_off(hs.backoff);
                    hs.deadline = Some(now + rto);
                    let (bytes, id) = (hs.message_bytes, u64::from(hs.sent));
                    let ack = self.receiver.delivered();
                    self.send_message(w, bytes, id, ack);
                }
                self.sync_handshake(w);
            }
        }
    }

    // ------------------------------------------------------------ transmission

    /// Let the sender act, then transmit what it produced and re-arm its timer.
    #[inline]
    fn run_sender<W: Wire>(&mut self, w: &mut W, f: impl FnOnce(&mut Sender, Time, &mut Vec<Segment>)) {
        let mut buf = w.take_segments();
        if self.local_congestion {
            let full = self.sender.mss() as u32 + self.header;
            self.sender.set_room(w.room(self.heads.0.first, full));
        }
        f(&mut self.sender, w.now(), &mut buf);
        let fin = self.hs.is_some();
        let client_bytes = self.client_bytes();
        for s in buf.drain(..) {
            let mut p = Packet::new(self.id, self.data_route, PacketKind::Data, s.len + self.header);
            p.seq = s.seq;
            p.len = s.len;
            p.ack = client_bytes;
            p.retx = s.retx;
            p.fin = fin && s.last;
            match self.jitter.as_mut() {
                None => w.transmit(p, self.heads.0, &[]),
                Some(j) => j.queue.push_back(p),
            }
        }
        w.put_segments(buf);
        if self.jitter.is_some() {
            self.arm_release(w);
        }
        self.sync_rto(w);
        w.sent(self);
    }

    /// With segments held back and no release due, they leave together
    /// after a fresh draw, and those the sender adds meanwhile with them:
    /// ns-2's `send_much`, which with `overhead_` sets its delayed-send
    /// timer to `Random::uniform(overhead_)` and, when it fires, sends all
    /// the window allows.
    fn arm_release<W: Wire>(&mut self, w: &mut W) {
        let Some(j) = self.jitter.as_mut() else { return };
        if j.queue.is_empty() || j.timer.is_armed() {
            return;
        }
        let wait = crate::engine::rng::keyed_u64(j.key, j.draws) % (j.max_ns + 1);
        j.draws += 1;
        if let Some((t, gen)) = j.timer.arm(Some(w.now() + Dur::from_ns(wait))) {
            w.wake(self.id, Timer::Release, t, gen);
        }
    }

    fn send_ack<W: Wire>(&mut self, w: &mut W, ack: u64, fin: bool) {
        let mut blocks = [(0u64, 0u64); MAX_SACK];
        let n = self.receiver.sack_blocks(&mut blocks);
        let opt = self.receiver.sack_option_bytes(n);
        let mut p = Packet::new(self.id, self.ack_route, PacketKind::Ack, self.header + opt);
        p.ack = ack;
        p.fin = fin;
        p.nsack = n as u8;
        p.set_window(self.receiver.window());
        w.transmit(p, self.heads.1, &blocks[..n]);
    }

    /// A control packet carrying `extra` bytes (a message for client data).
    fn send_control<W: Wire>(&mut self, w: &mut W, kind: PacketKind, extra: u32, seq: u64) {
        let route = match kind {
            PacketKind::SynAck | PacketKind::Close | PacketKind::Data => self.data_route,
            _ => self.ack_route,
        };
        let mut p = Packet::new(self.id, route, kind, self.header + extra);
        p.len = extra;
        p.seq = seq;
        let head = if route == self.data_route {
            p.ack = self.client_bytes();
            self.heads.0
        } else {
            self.heads.1
        };
        w.transmit(p, head, &[]);
    }

    /// Client message bytes the server has taken in (0 without a handshake).
    fn client_bytes(&self) -> u64 {
        self.hs.as_ref().map_or(0, |h| h.client_bytes)
    }

    /// The routes of the data (server to client) and of the ACKs.
    pub fn routes(&self) -> (u32, u32) {
        (self.data_route, self.ack_route)
    }

    /// A client message of `bytes` bytes, number `id`, carrying ACK `ack`.
    fn send_message<W: Wire>(&mut self, w: &mut W, bytes: u32, id: u64, ack: u64) {
        let mut p = Packet::new(self.id, self.ack_route, PacketKind::ClientData, self.header + bytes);
        p.len = bytes;
        p.seq = id;
        p.ack = ack;
        w.transmit(p, self.heads.1, &[]);
    }

    fn sync_rto<W: Wire>(&mut self, w: &mut W) {
        if let Some((t, gen)) = self.rto.arm(self.sender.poll_timeout()) {
            w.wake(self.id, Timer::Rto, t, gen);
        }
    }

    fn sync_delack<W: Wire>(&mut self, w: &mut W) {
        if let Some((t, gen)) = self.delack.arm(self.receiver.poll_timeout()) {
            w.wake(self.id, Timer::DelAck, t, gen);
        }
    }

    fn sync_handshake<W: Wire>(&mut self, w: &mut W) {
        let Some(hs) = self.hs.as_mut() else { return };
        if let Some((t, gen)) = hs.syn_timer.arm(hs.opener.poll_timeout()) {
            w.wake(self.id, Timer::Syn, t, gen);
        }
        if let Some((t, gen)) = hs.synack_timer.arm(hs.listener.poll_timeout()) {
            w.wake(self.id, Timer::SynAck, t, gen);
        }
        if let Some((t, gen)) = hs.message_timer.arm(hs.deadline) {
            w.wake(self.id, Timer::Message, t, gen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the prefetches of an arriving packet's connection assume: the
    /// fields every packet reads come first, then the receiver (a data
    /// packet's prefetch stops at its end), then the sender, which ends the
    /// connection (an ACK's and a retransmission timer's prefetch skip the
    /// receiver and run to the end).
    #[test]
    fn the_receiver_lies_between_the_shared_fields_and_the_sender_which_ends_the_connection() {
        use std::mem::{offset_of, size_of};
        let (recv, send) = (offset_of!(Connection, receiver), offset_of!(Connection, sender));
        for shared in [offset_of!(Connection, id), offset_of!(Connection, heads), offset_of!(Connection, rto), offset_of!(Connection, delack), offset_of!(Connection, size)] {
            assert!(shared < recv, "a shared field at {shared} lies after the receiver at {recv}");
        }
        assert_eq!(Connection::CLIENT_SIDE_BYTES, recv + size_of::<Receiver>());
        assert!(Connection::CLIENT_SIDE_BYTES <= send);
        assert_eq!(send + size_of::<Sender>(), size_of::<Connection>());
    }

    /// A wire that records what the connection does, with no network or engine.
    #[derive(Default)]
    struct Recorder {
        now: Time,
        sent: Vec<Packet>,
        wakes: Vec<(Timer, Time)>,
        gens: Vec<u32>,
        buf: Vec<Segment>,
    }

    impl Wire for Recorder {
        fn now(&self) -> Time {
            self.now
        }
        fn transmit(&mut self, p: Packet, _head: RouteHead, _sack: &[(u64, u64)]) {
            self.sent.push(p);
        }
        fn wake(&mut self, _conn: u32, timer: Timer, at: Time, gen: u32) {
            self.wakes.push((timer, at));
            self.gens.push(gen);
        }
        fn sent(&mut self, _conn: &Connection) {}
        fn take_segments(&mut self) -> Vec<Segment> {
            std::mem::take(&mut self.buf)
        }
        fn put_segments(&mut self, buf: Vec<Segment>) {
            self.buf = buf;
        }
        fn room(&mut self, _link: u32, _bytes: u32) -> u64 {
            u64::MAX
        }
    }

    fn kinds(r: &Recorder) -> Vec<PacketKind> {
        r.sent.iter().map(|p| p.kind).collect()
    }

    #[test]
    fn send_jitter_holds_an_opportunity_to_send_one_uniform_draw() {
        // IW 4: the first window waits one draw of U[0, 10 ms], then leaves
        // whole, in order (ns-2's overhead_). (A superseded release does
        // nothing, as any timer's: `engine::timer`'s test.)
        let cfg = TcpConfig { iw_bytes: 4 * 1460, ..Default::default() };
        let mut c = Connection::new(0, 0, 0, 0, 1, &cfg, Some(8 * 1460), 0, Time::ZERO);
        let max = Dur::from_ms(10);
        c.set_send_jitter(max, 7);
        let mut w = Recorder::default();
        c.open(&mut w);
        assert!(w.sent.is_empty(), "held back");
        let release = |w: &Recorder| (0..w.wakes.len()).filter(|&i| w.wakes[i].0 == Timer::Release).collect::<Vec<_>>();
        assert_eq!(release(&w).len(), 1);
        let i = release(&w)[0];
        let wait = crate::engine::rng::keyed_u64(7, 0) % (max.as_ns() + 1);
        assert_eq!(w.wakes[i].1, Time::ZERO + Dur::from_ns(wait));
        w.now = w.wakes[i].1;
        let gen = w.gens[i];
        assert!(!c.idle(), "segments and their release are queued");
        c.on_timer(&mut w, Timer::Release, gen);
        assert_eq!(w.sent.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 1460, 2920, 4380]);
        assert_eq!(release(&w).len(), 1, "nothing more held back");
        // An ACK of the first two segments: the two the window now allows wait the next draw.
        let mut ack = Packet::new(0, 1, PacketKind::Ack, 40);
        ack.ack = 2 * 1460;
        w.now += Dur::from_ms(50);
        w.sent.clear();
        c.on_packet(&mut w, &ack, &[]);
        assert!(w.sent.is_empty());
        let i = *release(&w).last().unwrap();
        let wait = crate::engine::rng::keyed_u64(7, 1) % (max.as_ns() + 1);
        assert_eq!(w.wakes[i].1, w.now + Dur::from_ns(wait));
        w.now = w.wakes[i].1;
        let gen = w.gens[i];
        c.on_timer(&mut w, Timer::Release, gen);
        assert!(w.sent.len() >= 2 && w.sent.windows(2).all(|p| p[1].seq == p[0].seq + 1460) && w.sent[0].seq == 4 * 1460);
    }

    #[test]
    fn handshake_then_data_then_fin_and_close() {
        let cfg = TcpConfig { handshake: true, iw_bytes: 2 * 1460, ..Default::default() };
        let mut c = Connection::new(0, 0, 0, 0, 1, &cfg, Some(2000), 100, Time::ZERO);
        let mut w = Recorder::default();
        c.open(&mut w);
        assert_eq!(kinds(&w), [PacketKind::Syn]);
        assert_eq!(w.wakes, [(Timer::Syn, Time::ZERO + Dur::from_secs(1))]);
        let syn = w.sent[0];
        w.now = Time::from_ns(10_000_000);
        c.on_packet(&mut w, &syn, &[]);
        let synack = *w.sent.last().unwrap();
        assert_eq!(synack.kind, PacketKind::SynAck);
        w.now = Time::from_ns(20_000_000);
        c.on_packet(&mut w, &synack, &[]);
        let msg = *w.sent.last().unwrap();
        assert_eq!((msg.kind, msg.len, msg.wire_bytes), (PacketKind::ClientData, 100, 140));
        w.now = Time::from_ns(30_000_000);
        w.sent.clear();
        c.on_packet(&mut w, &msg, &[]);
        assert_eq!(kinds(&w), [PacketKind::Data, PacketKind::Data]);
        assert!(w.sent[1].fin && !w.sent[0].fin, "the last segment carries FIN");
        let data: Vec<Packet> = w.sent.drain(..).collect();
        assert_eq!(c.on_packet(&mut w, &data[0], &[]), None);
        assert_eq!(w.sent.pop().map(|p| (p.kind, p.ack, p.fin)), Some((PacketKind::Ack, 1460, false)));
        assert_eq!(c.on_packet(&mut w, &data[1], &[]), Some(ConnEvent::Complete));
        assert!(w.sent.is_empty(), "the ACK waits for the owner");
        c.after_event(&mut w);
        let ack = w.sent.pop().unwrap();
        assert!(ack.kind == PacketKind::Ack && ack.fin && ack.ack == 2000);
        c.on_packet(&mut w, &ack, &[]);
        let close = w.sent.pop().unwrap();
        assert_eq!(close.kind, PacketKind::Close);
        c.on_packet(&mut w, &close, &[]);
        assert!(c.closed());
    }

    #[test]
    fn pipelined_replies_complete_one_by_one_in_order_with_their_tags() {
        // One-way TCP, IW 10: the first reply (3,000 B, tag 1) is in flight
        // when two more are asked for (1,000 B, tag 2; 500 B, tag 3).
        let cfg = TcpConfig { iw_bytes: 10 * 1460, ..Default::default() };
        let mut c = Connection::new(0, 0, 1, 0, 1, &cfg, Some(3000), 0, Time::ZERO);
        let mut w = Recorder::default();
        c.open(&mut w);
        c.exchange(&mut w, 0, 1000, 2);
        c.exchange(&mut w, 0, 500, 3);
        let data: Vec<Packet> = w.sent.drain(..).filter(|p| p.kind == PacketKind::Data).collect();
        let ends: Vec<u64> = data.iter().map(|p| p.seq + u64::from(p.len)).collect();
        assert_eq!(ends, [1460, 2920, 3000, 4000, 4500], "each reply is written as it is asked for");
        // The segment ending the first reply arrives after the second reply's:
        // when it fills the hole, both replies are complete and the owner
        // hears of the second; the last segment ends the third.
        let mut got = Vec::new();
        for i in [0, 1, 3, 2, 4] {
            let ev = c.on_packet(&mut w, &data[i], &[]);
            got.push(ev.map(|_| c.tag));
            c.after_event(&mut w);
        }
        assert_eq!(got, [None, None, None, Some(2), Some(3)]);
        assert_eq!(c.receiver.done_at(), Some(Time::ZERO));
        // A reply asked for once everything has arrived needs no marks.
        c.exchange(&mut w, 0, 100, 4);
        let p = *w.sent.iter().rev().find(|p| p.kind == PacketKind::Data).unwrap();
        assert_eq!(c.on_packet(&mut w, &p, &[]).map(|_| c.tag), Some(4));
    }

    #[test]
    fn an_exchange_asks_for_more_and_the_client_does_not_close() {
        let cfg = TcpConfig { handshake: true, ..Default::default() };
        let mut c = Connection::new(0, 0, 0, 0, 1, &cfg, Some(500), 0, Time::ZERO);
        let mut w = Recorder::default();
        c.open(&mut w);
        for _ in 0..2 {
            let p = *w.sent.last().unwrap();
            c.on_packet(&mut w, &p, &[]);
        }
        let open = *w.sent.last().unwrap();
        c.on_packet(&mut w, &open, &[]);
        let data = *w.sent.last().unwrap();
        assert_eq!(c.on_packet(&mut w, &data, &[]), Some(ConnEvent::Complete));
        c.exchange(&mut w, 250, 700, 7);
        let msg = *w.sent.last().unwrap();
        assert_eq!((msg.kind, msg.seq, msg.ack, msg.len), (PacketKind::ClientData, 2, 500, 250));
        c.after_event(&mut w);
        let ack = *w.sent.last().unwrap();
        assert!(!ack.fin, "more is coming");
        assert_eq!(c.size, Some(1200));
        // The message's timer, then its answer.
        assert!(w.wakes.iter().any(|&(t, _)| t == Timer::Message));
        w.sent.clear();
        c.on_packet(&mut w, &msg, &[]);
        assert_eq!(w.sent.iter().map(|p| p.len).sum::<u32>(), 700);
    }
}
