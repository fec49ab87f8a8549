//! Packet captures: libpcap files that Wireshark, tshark and tcptrace read.
//!
//! A captured link direction writes two files as the run goes (nothing is
//! held for the end of the run; a second thread does the writing):
//!
//! - `<from>-<to>.pcap`: every packet the link starts to transmit, stamped
//!   with its transmission start (where `tcpdump` on the sending interface
//!   would see it);
//! - `<from>-<to>.drops.pcap`: every packet the link refused or lost (queue
//!   overflow, AQM or EPD/PPD discard, loss injection), stamped when it was
//!   dropped.
//!
//! Both are classic libpcap files (magic `a1b23c4d`: nanosecond timestamps),
//! link type Ethernet, snapshot length [`SNAPLEN`]: each record holds the
//! Ethernet, IPv4 and TCP headers, and its original length is the packet's
//! real length, so the payload is counted but not stored.
//!
//! The headers are real ones, rendered from the simulator's packet:
//!
//! - node `i` (in the scenario's node order, from 0) is `10.0.0.0 + i + 1`,
//!   with MAC address `02:00:` and the same four bytes;
//! - the server (the data sender) listens on port `5001 + application index`;
//!   connection `c` uses client port `32768 + c % 28232` (Linux's ephemeral
//!   range), so ports repeat only after 28,232 connections;
//! - each side's initial sequence number is a hash of the connection number,
//!   and the SYN and FIN take one sequence number each, as in TCP;
//! - SYN and SYN-ACK carry MSS, window scale (the smallest shift that fits
//!   the receive window in 16 bits) and, with SACK, SACK-permitted; ACKs carry
//!   their SACK blocks; the TCP modelled has no timestamps option;
//! - the client closes with a FIN on the ACK that completes its last
//!   transfer, and the server answers FIN-ACK;
//! - IP and TCP checksums are correct (the payload counts as zeros).
//!
//! A client request's sequence number is where the capture point has seen
//! the client's previous requests end. A pure ACK sent while an earlier
//! request is lost upstream of the capture point therefore shows the client's
//! sequence number before that request.

use super::packet::{Packet, PacketKind};
use crate::time::Time;
use pcap_file::pcap::{PcapHeader, PcapWriter, RawPcapPacket};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::path::{Path, PathBuf};
use std::borrow::Cow;

/// Bytes kept of each packet: Ethernet (14), IPv4 (20) and the longest TCP
/// header (60).
pub const SNAPLEN: u32 = 94;

const ETH: usize = 14;
const IP: usize = 20;
/// Where the TCP header starts.
const T: usize = ETH + IP;

/// What a capture needs to know of a connection, given when it opens.
#[derive(Copy, Clone, Debug)]
pub struct FlowHeader {
    /// Node numbers of the client (data receiver) and the server (data sender).
    pub client: u32,
    pub server: u32,
    /// The server's port.
    pub server_port: u16,
    pub client_port: u16,
    pub isn_client: u32,
    pub isn_server: u32,
    pub mss: u16,
    /// The client's receive window, bytes.
    pub window: u64,
    /// Window scale shift advertised on the SYN and SYN-ACK.
    pub wscale: u8,
    pub sack: bool,
    pub handshake: bool,
}

impl FlowHeader {
    /// The header of connection `conn` of application `app`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(conn: u32, app: u32, client: u32, server: u32, mss: u32, window: u64, sack: bool, handshake: bool) -> FlowHeader {
        let h = splitmix64(u64::from(conn) ^ 0x7463_706c_6162); // "tcplab"
        FlowHeader {
            client,
            server,
            server_port: 5001u32.saturating_add(app).min(65535) as u16,
            client_port: (32768 + conn % 28232) as u16,
            isn_client: h as u32,
            isn_server: (h >> 32) as u32,
            mss: mss.min(65535) as u16,
            window,
            wscale: wscale_for(window),
            sack,
            handshake,
        }
    }
}

/// RFC 7323 section 2.3: the smallest shift (at most 14) that fits `window` in 16 bits.
pub fn wscale_for(window: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (window >> s) > 65535 {
        s += 1;
    }
    s
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The IPv4 address of node `i`.
pub fn node_addr(i: u32) -> [u8; 4] {
    (0x0a00_0000u32 + i + 1).to_be_bytes()
}

/// What one capture point has seen of a connection's client side.
#[derive(Copy, Clone, Debug, Default)]
pub struct ClientSeen {
    /// The last request seen: its number (`u64::MAX`: none yet), offset and length.
    msg_id: u64,
    msg_off: u64,
    msg_len: u64,
    /// The server's highest data byte seen, plus one.
    server_end: u64,
}

impl ClientSeen {
    fn new() -> ClientSeen {
        ClientSeen { msg_id: u64::MAX, ..Default::default() }
    }

    /// Where the client's byte stream stands after what was seen.
    fn client_end(&self) -> u64 {
        if self.msg_id == u64::MAX {
            0
        } else {
            self.msg_off + self.msg_len
        }
    }

    /// The offset of request `id` of `len` bytes (the opening one is number 0).
    fn request(&mut self, id: u64, len: u64) -> u64 {
        if self.msg_id == id {
            return self.msg_off;
        }
        if id == 0 {
            // The opening request, or an answer to a late duplicate SYN-ACK.
            if self.msg_id == u64::MAX {
                self.msg_id = 0;
                self.msg_len = len;
            }
            return 0;
        }
        if self.msg_id != u64::MAX && id < self.msg_id {
            return self.msg_off;
        }
        self.msg_off = self.client_end();
        self.msg_id = id;
        self.msg_len = len;
        self.msg_off
    }
}

const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;

/// Headers of one captured packet.
pub type Frame = [u8; SNAPLEN as usize];

/// Render packet `p` of the connection `f` (with absolute SACK blocks
/// `sack`) into `out`, as Ethernet + IPv4 + TCP headers. `seen` is the
/// capture point's view of the connection, updated. `ip_id` is the IP
/// identification. Returns the bytes of `out` written and the packet's
/// original (untruncated) length.
pub fn render(out: &mut Frame, f: &FlowHeader, seen: &mut ClientSeen, p: &Packet, sack: &[(u64, u64)], ip_id: u16) -> (usize, u32) {
    let from_server = matches!(p.kind, PacketKind::Data | PacketKind::SynAck | PacketKind::Close);
    let (src, dst, sport, dport) = if from_server { (f.server, f.client, f.server_port, f.client_port) } else { (f.client, f.server, f.client_port, f.server_port) };
    // Sequence numbers: each side's stream starts one past its ISN (the SYN's).
    let c0 = f.isn_client.wrapping_add(1);
    let s0 = f.isn_server.wrapping_add(1);
    let at = |base: u32, off: u64| base.wrapping_add(off as u32);
    let scaled = |w: u64| (w >> f.wscale).min(65535) as u16;
    // Options are written in place, after the fixed TCP header.
    let opts = &mut out[T + 20..];
    let mut olen = 0usize;
    let (seq, ack, flags, window, payload);
    match p.kind {
        PacketKind::Syn | PacketKind::SynAck => {
            let syn = p.kind == PacketKind::Syn;
            seq = if syn { f.isn_client } else { f.isn_server };
            ack = if syn { 0 } else { c0 };
            flags = if syn { SYN } else { SYN | ACK };
            window = f.window.min(65535) as u16;
            payload = 0;
            // MSS (RFC 9293 section 3.7.1), window scale (RFC 7323 section 2.2), SACK-permitted (RFC 2018 section 2).
            opts[..4].copy_from_slice(&[2, 4, (f.mss >> 8) as u8, f.mss as u8]);
            opts[4..8].copy_from_slice(&[1, 3, 3, f.wscale]);
            olen = 8;
            if f.sack {
                opts[8..12].copy_from_slice(&[1, 1, 4, 2]);
                olen = 12;
            }
        }
        PacketKind::Data => {
            seen.server_end = seen.server_end.max(p.seq + u64::from(p.len));
            seq = at(s0, p.seq);
            ack = at(c0, p.ack);
            flags = ACK | if p.fin { PSH } else { 0 };
            window = scaled(f.window);
            payload = p.len;
        }
        PacketKind::ClientData => {
            let off = seen.request(p.seq, u64::from(p.len));
            seq = at(c0, off);
            ack = at(s0, p.ack);
            flags = ACK | PSH;
            window = scaled(f.window);
            payload = p.len;
        }
        PacketKind::Ack => {
            seq = at(c0, seen.client_end());
            ack = at(s0, p.ack);
            flags = ACK | if p.fin { FIN } else { 0 };
            window = scaled(p.window());
            payload = 0;
            if !sack.is_empty() {
                // RFC 2018 section 3: kind 5, length 2 + 8n, after two NOPs.
                opts[..4].copy_from_slice(&[1, 1, 5, (2 + 8 * sack.len()) as u8]);
                olen = 4;
                for &(l, r) in sack {
                    opts[olen..olen + 4].copy_from_slice(&at(s0, l).to_be_bytes());
                    opts[olen + 4..olen + 8].copy_from_slice(&at(s0, r).to_be_bytes());
                    olen += 8;
                }
            }
        }
        PacketKind::Close => {
            // The server's FIN-ACK: after all its data, acknowledging the client's FIN.
            seq = at(s0, seen.server_end);
            ack = at(c0, p.ack + 1);
            flags = FIN | ACK;
            window = scaled(f.window);
            payload = 0;
        }
    }
    let tcp_len = 20 + olen;
    let ip_total = IP + tcp_len + payload as usize;
    let (sa, da) = (node_addr(src), node_addr(dst));
    // Ethernet II.
    out[0..2].copy_from_slice(&[0x02, 0x00]);
    out[2..6].copy_from_slice(&da);
    out[6..8].copy_from_slice(&[0x02, 0x00]);
    out[8..12].copy_from_slice(&sa);
    out[12..14].copy_from_slice(&[0x08, 0x00]);
    // IPv4 (RFC 791): no options, DF, TTL 64, protocol 6.
    let ip = &mut out[ETH..ETH + IP];
    ip[0..2].copy_from_slice(&[0x45, 0]);
    ip[2..4].copy_from_slice(&(ip_total.min(65535) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
    ip[6..12].copy_from_slice(&[0x40, 0, 64, 6, 0, 0]);
    ip[12..16].copy_from_slice(&sa);
    ip[16..20].copy_from_slice(&da);
    let ipsum = checksum(0, ip);
    ip[10..12].copy_from_slice(&ipsum.to_be_bytes());
    // TCP (RFC 9293 section 3.1).
    let tcp = &mut out[T..T + tcp_len];
    tcp[0..2].copy_from_slice(&sport.to_be_bytes());
    tcp[2..4].copy_from_slice(&dport.to_be_bytes());
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    tcp[8..12].copy_from_slice(&ack.to_be_bytes());
    tcp[12..14].copy_from_slice(&[((tcp_len / 4) as u8) << 4, flags]);
    tcp[14..16].copy_from_slice(&window.to_be_bytes());
    tcp[16..20].copy_from_slice(&[0, 0, 0, 0]);
    // Pseudo-header (RFC 9293 section 3.1): addresses, protocol, TCP length;
    // the zero payload adds nothing.
    let tcp_total = (tcp_len + payload as usize) as u32;
    let mut sum = checksum_acc(0, &sa) + checksum_acc(0, &da) + 6 + u64::from(tcp_total);
    sum = checksum_acc(sum, tcp);
    tcp[16..18].copy_from_slice(&fold(sum).to_be_bytes());
    (T + tcp_len, (ETH + ip_total) as u32)
}

/// The ones'-complement sum of `data` (RFC 1071), added to `acc`: summed
/// as 32-bit words, which folds to the same 16-bit sum (RFC 1071 section
/// 2(B), parallel summation). `data` is of even length.
fn checksum_acc(mut acc: u64, data: &[u8]) -> u64 {
    debug_assert!(data.len().is_multiple_of(2));
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    if let [a, b] = words.remainder() {
        acc += u64::from(u16::from_be_bytes([*a, *b]));
    }
    acc
}

fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The Internet checksum of `data`.
pub fn checksum(acc: u64, data: &[u8]) -> u16 {
    fold(checksum_acc(acc, data))
}

/// Bytes gathered per file before they go to the writing thread.
const CHUNK: usize = 1 << 18;
/// Chunks that may wait for the writing thread before the simulation waits.
const QUEUED_CHUNKS: usize = 16;

/// One capture file's bytes on their way to disk: gathered here into chunks
/// that the capture thread writes, so the simulation's thread spends no time
/// in the kernel, and memory stays bounded (the file streams).
struct ChunkWriter {
    file: usize,
    buf: Vec<u8>,
    tx: SyncSender<(usize, Vec<u8>)>,
    /// Chunks the thread has written, for reuse (fresh ones fault their pages in).
    spare: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl ChunkWriter {
    fn hand_over(&mut self) -> std::io::Result<()> {
        let next = self.spare.lock().ok().and_then(|mut s| s.pop()).unwrap_or_else(|| Vec::with_capacity(CHUNK));
        let full = std::mem::replace(&mut self.buf, next);
        self.tx.send((self.file, full)).map_err(|_| std::io::Error::other("the capture writing thread stopped"))
    }
}

impl Write for ChunkWriter {
    #[inline]
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        // A record's header comes as four 4-byte fields: copy them inline.
        match <[u8; 4]>::try_from(data) {
            Ok(field) => self.buf.extend_from_slice(&field),
            Err(_) => self.buf.extend_from_slice(data),
        }
        if self.buf.len() >= CHUNK {
            self.hand_over()?;
        }
        Ok(data.len())
    }

    #[inline]
    fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.write(data).map(|_| ())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.hand_over()?;
        }
        Ok(())
    }
}

/// The capture thread: writes each chunk to its file, in order. After an
/// error it keeps taking chunks (so the simulation never blocks) and
/// returns the error when the run ends.
fn spawn_writer(mut files: Vec<File>, rx: Receiver<(usize, Vec<u8>)>, spare: Arc<Mutex<Vec<Vec<u8>>>>) -> std::io::Result<JoinHandle<std::io::Result<()>>> {
    std::thread::Builder::new().name("tcplab-pcap".into()).spawn(move || {
        let mut result = Ok(());
        for (k, mut chunk) in rx {
            if result.is_ok() {
                result = files[k].write_all(&chunk);
            }
            chunk.clear();
            if let Ok(mut s) = spare.lock() {
                if s.len() < QUEUED_CHUNKS {
                    s.push(chunk);
                }
            }
        }
        result
    })
}

type Writer = PcapWriter<ChunkWriter>;

struct LinkCapture {
    /// The two files' writers, until [`Captures::finish`] flushes them.
    sent: Option<Writer>,
    drops: Option<Writer>,
    /// Per connection: what this capture point has seen of its client side.
    seen: Vec<ClientSeen>,
    sent_count: u64,
    drop_count: u64,
    sent_path: PathBuf,
    drops_path: PathBuf,
    name: String,
}

/// A written capture, for the results.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaptureRow {
    pub link: String,
    pub file: String,
    pub packets: u64,
    pub drops_file: String,
    pub drops: u64,
}

/// The captures of a run: one per captured link direction.
pub struct Captures {
    /// Per link: its capture's index, or `u32::MAX`.
    by_link: Vec<u32>,
    caps: Vec<LinkCapture>,
    flows: Vec<FlowHeader>,
    buf: Frame,
    /// The first write error, reported at the end.
    error: Option<String>,
    /// The thread that writes the files.
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

fn pcap_header() -> PcapHeader {
    PcapHeader {
        snaplen: SNAPLEN,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
        ..Default::default()
    }
}

impl Captures {
    /// Captures of `links` (link number, name such as `r0->r1`) into `dir`,
    /// which must exist; `nodes` names the nodes, for the `hosts` file.
    pub fn create(dir: &Path, n_links: usize, links: &[(u32, String)], nodes: &[String]) -> std::io::Result<Captures> {
        let mut by_link = vec![u32::MAX; n_links];
        let mut caps = Vec::new();
        let mut files = Vec::new();
        let (tx, rx) = sync_channel(QUEUED_CHUNKS);
        let spare = Arc::new(Mutex::new(Vec::new()));
        let mut open = |path: &Path| -> std::io::Result<Writer> {
            files.push(File::create(path)?);
            let w = ChunkWriter { file: files.len() - 1, buf: Vec::new(), tx: tx.clone(), spare: spare.clone() };
            PcapWriter::with_header(w, pcap_header()).map_err(std::io::Error::other)
        };
        for (l, name) in links {
            if by_link[*l as usize] != u32::MAX {
                continue;
            }
            let stem = name.replace("->", "-");
            let sent_path = dir.join(format!("{stem}.pcap"));
            let drops_path = dir.join(format!("{stem}.drops.pcap"));
            by_link[*l as usize] = caps.len() as u32;
            caps.push(LinkCapture {
                sent: Some(open(&sent_path)?),
                drops: Some(open(&drops_path)?),
                seen: Vec::new(),
                sent_count: 0,
                drop_count: 0,
                sent_path,
                drops_path,
                name: name.clone(),
            });
        }
        let thread = Some(spawn_writer(files, rx, spare)?);
        // Wireshark's hosts file format: address, then name.
        let hosts: String = nodes.iter().enumerate().map(|(i, n)| {
            let a = node_addr(i as u32);
            format!("{}.{}.{}.{}\t{n}\n", a[0], a[1], a[2], a[3])
        }).collect();
        std::fs::write(dir.join("hosts"), hosts)?;
        Ok(Captures { by_link, caps, flows: Vec::new(), buf: [0; SNAPLEN as usize], error: None, thread })
    }

    /// Whether `link` is captured.
    #[inline]
    pub fn captures(&self, link: u32) -> bool {
        self.by_link[link as usize] != u32::MAX
    }

    /// Connection `flow` (numbered from 0, in order) opens.
    pub fn add_flow(&mut self, flow: u32, header: FlowHeader) {
        debug_assert_eq!(flow as usize, self.flows.len());
        self.flows.push(header);
    }

    /// Packet `p` starts transmission on `link` at `t` (`dropped`: is
    /// dropped there at `t`).
    pub fn record(&mut self, t: Time, link: u32, p: &Packet, sack: &[(u64, u64)], dropped: bool) {
        let k = self.by_link[link as usize];
        if k == u32::MAX {
            return;
        }
        let cap = &mut self.caps[k as usize];
        let f = &self.flows[p.conn as usize];
        if cap.seen.len() <= p.conn as usize {
            cap.seen.resize(p.conn as usize + 1, ClientSeen::new());
        }
        let n = cap.sent_count + cap.drop_count;
        let (len, orig) = render(&mut self.buf, f, &mut cap.seen[p.conn as usize], p, sack, n as u16);
        let ns = t.as_ns();
        let pkt = RawPcapPacket {
            ts_sec: (ns / 1_000_000_000) as u32,
            ts_frac: (ns % 1_000_000_000) as u32,
            incl_len: len as u32,
            orig_len: orig,
            data: Cow::Borrowed(&self.buf[..len]),
        };
        let (w, count) = if dropped { (&mut cap.drops, &mut cap.drop_count) } else { (&mut cap.sent, &mut cap.sent_count) };
        *count += 1;
        if let Some(Err(e)) = w.as_mut().map(|w| w.write_raw_packet(&pkt)) {
            self.error.get_or_insert_with(|| format!("writing a capture of {}: {e}", cap.name));
        }
    }

    /// Flush every file; the captures written, or the first error.
    pub fn finish(&mut self) -> Result<Vec<CaptureRow>, String> {
        for cap in &mut self.caps {
            for w in [cap.sent.take(), cap.drops.take()].into_iter().flatten() {
                // Hands over the last chunk; dropping the writer lets the thread end.
                if let Err(e) = w.into_writer().flush() {
                    self.error.get_or_insert_with(|| format!("writing a capture of {}: {e}", cap.name));
                }
            }
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => {
                self.error.get_or_insert_with(|| format!("writing captures: {e}"));
            }
            Some(Err(_)) => {
                self.error.get_or_insert_with(|| "the capture writing thread failed".to_string());
            }
            _ => {}
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        Ok(self.caps.iter().map(|c| CaptureRow {
            link: c.name.clone(),
            file: c.sent_path.display().to_string(),
            packets: c.sent_count,
            drops_file: c.drops_path.display().to_string(),
            drops: c.drop_count,
        }).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> FlowHeader {
        FlowHeader::new(7, 2, 0, 3, 1460, 1 << 20, true, true)
    }

    fn be32(b: &[u8]) -> u32 {
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// RFC 1071's sum, 16 bits at a time, as an independent check.
    fn naive_checksum(data: &[u8]) -> u16 {
        let mut sum: u32 = 0;
        for c in data.chunks(2) {
            sum += u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0));
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    #[test]
    fn checksum_matches_a_known_header_and_the_16_bit_sum() {
        // An IPv4 header whose checksum is 0xb861.
        let h = [0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0, 0xc7];
        assert_eq!(checksum(0, &h), 0xb861);
        let data: Vec<u8> = (0..58u32).map(|i| (i * 37 + 11) as u8).collect();
        for n in (0..=58).step_by(2) {
            assert_eq!(checksum(0, &data[..n]), naive_checksum(&data[..n]));
        }
    }

    #[test]
    fn window_scale_is_the_smallest_shift_that_fits() {
        assert_eq!(wscale_for(65535), 0);
        assert_eq!(wscale_for(65536), 1);
        assert_eq!(wscale_for(1 << 20), 5);
        assert_eq!(wscale_for(u64::MAX), 14);
    }

    #[test]
    fn addresses_and_ports_follow_the_documented_rule() {
        let f = flow();
        assert_eq!(node_addr(0), [10, 0, 0, 1]);
        assert_eq!(node_addr(300), [10, 0, 1, 45]);
        assert_eq!((f.server_port, f.client_port), (5003, 32775));
    }

    #[test]
    fn a_data_segment_has_valid_checksums_and_its_true_sequence_numbers() {
        let f = flow();
        let mut seen = ClientSeen::new();
        let mut p = Packet::new(7, 0, PacketKind::Data, 1500);
        p.seq = 2920;
        p.len = 1460;
        p.ack = 100;
        let mut out: Frame = [0; SNAPLEN as usize];
        let (len, orig) = render(&mut out, &f, &mut seen, &p, &[], 9);
        assert_eq!(orig, 14 + 20 + 20 + 1460);
        assert_eq!(len, 54);
        let ip = &out[14..34];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1500, "IP total length");
        assert_eq!(naive_checksum(ip), 0, "IP header checksum verifies");
        assert_eq!(&ip[12..16], &[10, 0, 0, 4], "from the server, node 3");
        let tcp = &out[34..54];
        assert_eq!(be32(&tcp[4..8]), f.isn_server.wrapping_add(1 + 2920));
        assert_eq!(be32(&tcp[8..12]), f.isn_client.wrapping_add(1 + 100));
        assert_eq!(tcp[13], ACK);
        assert_eq!(u16::from_be_bytes([tcp[14], tcp[15]]), ((1u64 << 20) >> 5) as u16);
        // The TCP checksum over pseudo-header, header and zero payload verifies.
        let mut pseudo = [0u8; 12];
        pseudo[..4].copy_from_slice(&ip[12..16]);
        pseudo[4..8].copy_from_slice(&ip[16..20]);
        pseudo[9] = 6;
        pseudo[10..12].copy_from_slice(&1480u16.to_be_bytes());
        assert_eq!(naive_checksum(&[&pseudo[..], tcp].concat()), 0);
    }

    #[test]
    fn syn_carries_mss_window_scale_and_sack_permitted() {
        let f = flow();
        let mut out: Frame = [0; SNAPLEN as usize];
        let p = Packet::new(7, 0, PacketKind::Syn, 40);
        let (len, orig) = render(&mut out, &f, &mut ClientSeen::new(), &p, &[], 0);
        assert_eq!((len, orig), (66, 14 + 20 + 32));
        let tcp = &out[34..];
        assert_eq!(tcp[12] >> 4, 8, "32-byte header");
        assert_eq!(tcp[13], SYN);
        assert_eq!(be32(&tcp[4..8]), f.isn_client);
        assert_eq!(&tcp[20..32], &[2, 4, 0x05, 0xb4, 1, 3, 3, 5, 1, 1, 4, 2]);
    }

    #[test]
    fn sack_blocks_and_the_clients_requests_advance_its_sequence_number() {
        let f = flow();
        let mut seen = ClientSeen::new();
        let mut out: Frame = [0; SNAPLEN as usize];
        let mut open = Packet::new(7, 0, PacketKind::ClientData, 140);
        open.len = 100;
        render(&mut out, &f, &mut seen, &open, &[], 0);
        assert_eq!(be32(&out[34 + 4..34 + 8]), f.isn_client.wrapping_add(1));
        let mut ack = Packet::new(7, 0, PacketKind::Ack, 50);
        ack.ack = 1000;
        ack.set_window(1 << 20);
        render(&mut out, &f, &mut seen, &ack, &[(2000, 3000)], 0);
        let tcp = &out[34..];
        assert_eq!(be32(&tcp[4..8]), f.isn_client.wrapping_add(101), "after the 100-byte request");
        assert_eq!(&tcp[20..24], &[1, 1, 5, 10]);
        assert_eq!(be32(&tcp[24..28]), f.isn_server.wrapping_add(2001));
        assert_eq!(be32(&tcp[28..32]), f.isn_server.wrapping_add(3001));
        // The next request (number 2) follows the first; its retransmission repeats it.
        let mut req = Packet::new(7, 0, PacketKind::ClientData, 90);
        req.seq = 2;
        req.len = 50;
        for _ in 0..2 {
            render(&mut out, &f, &mut seen, &req, &[], 0);
            assert_eq!(be32(&out[38..42]), f.isn_client.wrapping_add(101));
        }
        // The client's FIN, then the server's FIN-ACK after its data.
        let mut data = Packet::new(7, 0, PacketKind::Data, 1040);
        data.len = 1000;
        render(&mut out, &f, &mut seen, &data, &[], 0);
        let mut fin = Packet::new(7, 0, PacketKind::Ack, 40);
        fin.fin = true;
        fin.ack = 1000;
        render(&mut out, &f, &mut seen, &fin, &[], 0);
        assert_eq!((out[34 + 13], be32(&out[38..42])), (ACK | FIN, f.isn_client.wrapping_add(151)));
        let mut close = Packet::new(7, 0, PacketKind::Close, 40);
        close.ack = 150;
        render(&mut out, &f, &mut seen, &close, &[], 0);
        assert_eq!(out[34 + 13], ACK | FIN);
        assert_eq!(be32(&out[38..42]), f.isn_server.wrapping_add(1001));
        assert_eq!(be32(&out[42..46]), f.isn_client.wrapping_add(152), "acknowledges the client's FIN");
    }
}
