//! Applications: workloads as state machines.
//!
//! An application reacts to its own wake-ups ([`Apps::on_wake`]) and to its
//! connections' events ([`Apps::on_event`]), and acts through a
//! [`Transport`]: it opens connections, asks for more bytes on an open one,
//! and asks to be woken. It owns everything about its workload: when
//! transfers start, their sizes, web pages and their objects, and the pages
//! table. A connection carries a tag the application chose; here it names
//! the page a transfer belongs to.
//!
//! Kinds: `Bulk` (one transfer), `Repeat` (transfer after transfer, each on a
//! new connection, or with `persistent` asked for on the same one), `Web`
//! (pages of a primary object and embedded ones, over HTTP/1.0 or 1.1), and
//! `Burst` (N simultaneous transfers sharing a number of bytes evenly).

pub mod dist;

pub use dist::{SizeDist, Think};

use crate::tcp::ConnEvent;
use crate::engine::rng::RngStream;
use crate::time::{Dur, Time};
use serde::Serialize;

/// What an application can ask of the network's endpoints.
pub trait Transport {
    fn now(&self) -> Time;
    /// Open a new connection from one of this application's servers
    /// (`server`: 0 for its `src`, then its extra servers in order) to its
    /// client; once open, the server sends `size` bytes (`None`: unbounded).
    /// Returns its number.
    fn open(&mut self, server: u32, size: Option<u64>, tag: u64) -> u32;
    /// On open connection `conn`, the client asks with a `bytes`-byte message
    /// for `reply` bytes more; `tag` replaces the connection's tag.
    fn exchange(&mut self, conn: u32, bytes: u32, reply: u64, tag: u64);
    /// Whether connection `conn` carries messages (it has a handshake).
    fn has_handshake(&self, conn: u32) -> bool;
    /// Wake this application at `at`.
    fn wake_at(&mut self, at: Time);
}

/// A web browser's page model (RFC 2415 section 2).
#[derive(Clone, Debug)]
pub struct WebConfig {
    /// HTTP/1.1's rough model: one connection carries the primary and every
    /// embedded object, requested together once the primary has arrived.
    /// Otherwise HTTP/1.0: one connection per object, the embedded objects
    /// fetched at once after the primary completes.
    pub http11: bool,
    pub embedded: u32,
    pub primary: SizeDist,
    pub object: SizeDist,
    pub think: Think,
    /// Pages to fetch; `None`: until the end of the run.
    pub pages: Option<u64>,
    /// A page every `cycle` instead of think times. Open loop: each page
    /// starts a cycle after the previous one started, on its own connection,
    /// whether or not the previous one has completed. Closed loop
    /// (`cycle_closed`): one page at a time, the next a cycle after the
    /// previous one started or when it completes, if later. With `pages`
    /// set, every page is drawn at the first wake-up, so the pages table
    /// lists the pages asked for that never started too.
    pub cycle: Option<Dur>,
    pub cycle_closed: bool,
    /// A think time runs from the page's start (the request), not its end:
    /// the next page starts a think time after this one started, or when
    /// this one completes if that is later (one page at a time).
    pub think_from_start: bool,
    /// The embedded objects are asked for with the primary, not after it:
    /// HTTP/1.0, every object of the page on its own connection at once;
    /// HTTP/1.1, the whole page as one reply on one connection.
    pub embedded_with_primary: bool,
    /// HTTP/1.1, one connection per client for the whole run: each page is
    /// asked for on it as one reply (the whole page at once), pipelined
    /// behind any page still arriving, so the window carries over from page
    /// to page.
    pub persistent: bool,
}

#[derive(Clone, Debug)]
pub enum AppKind {
    /// One transfer.
    Bulk,
    /// Transfer after transfer, each on a new connection, the next one
    /// starting a think time after the previous one completes.
    ///
    /// With `persistent`, each transfer is asked for on the same connection
    /// when the next one follows at once (no think time), and each transfer
    /// is recorded as a one-object page.
    Repeat { think: Think, count: Option<u64>, persistent: bool },
    /// Page after page of web objects.
    Web(Box<WebConfig>),
    /// `flows` transfers opened at the same instant, sharing `bytes` evenly
    /// (the first `bytes % flows` carry one byte more). Transfer `i` comes
    /// from server `i % servers` (the application's `src`, then its extra
    /// servers), so with several servers the flows' packets interleave where
    /// the servers' paths meet.
    Burst { flows: u32, bytes: u64, servers: u32 },
}

/// An application: a client at `dst` fetching from a server at `src`.
pub struct App {
    pub name: String,
    pub src: u32,
    pub dst: u32,
    /// When it first wakes.
    pub start: Time,
    /// Bytes per transfer (`None`: unbounded).
    pub size: Option<u64>,
    pub kind: AppKind,
    pub rng: RngStream,
    pub transfers_started: u64,
    /// Bytes of the message a client sends per object asked for on an open connection.
    pub request_bytes: u32,
    pub pages_started: u64,
    /// Pages drawn ahead (cycles with a page count), not yet started.
    planned: std::collections::VecDeque<u32>,
    planned_drawn: bool,
    /// A persistent web client's connection, once open, and its pages not
    /// yet complete, oldest first.
    conn: Option<u32>,
    on_conn: std::collections::VecDeque<u32>,
    /// For an application the run waits for (`until`): its transfers (or
    /// pages, for kinds that fetch pages) still to complete. 0 otherwise.
    awaited: u64,
}

impl App {
    #[allow(clippy::too_many_arguments)]
    pub fn new(name: String, src: u32, dst: u32, start: Time, size: Option<u64>, kind: AppKind, rng: RngStream, request_bytes: u32) -> App {
        App { name, src, dst, start, size, kind, rng, transfers_started: 0, request_bytes, pages_started: 0, planned: Default::default(), planned_drawn: false, conn: None, on_conn: Default::default(), awaited: 0 }
    }

    /// How many completions finish this application, counted as
    /// [`Apps::wait_for`] counts them: transfers for a bulk transfer, a
    /// burst or a repeat, pages for a web client or a persistent repeat (each
    /// transfer a page). `None`: it never finishes (no count, or unbounded).
    pub fn completions_to_finish(&self) -> Option<u64> {
        match &self.kind {
            AppKind::Bulk => self.size.map(|_| 1),
            AppKind::Burst { flows, .. } => Some(u64::from(*flows)),
            AppKind::Repeat { count, .. } => *count,
            AppKind::Web(w) => w.pages,
        }
    }

    fn persistent(&self) -> bool {
        matches!(self.kind, AppKind::Repeat { persistent: true, .. })
    }

    /// A transfer or page completed at `now`: when does the next one start?
    fn next_start(&mut self, now: Time) -> Option<Time> {
        match &self.kind {
            AppKind::Bulk | AppKind::Burst { .. } => None,
            AppKind::Web(w) => {
                if w.pages.is_some_and(|c| self.pages_started >= c) {
                    None
                } else {
                    Some(now + w.think.draw(&mut self.rng))
                }
            }
            AppKind::Repeat { think, count, .. } => {
                if count.is_some_and(|c| self.transfers_started >= c) {
                    None
                } else {
                    Some(now + think.draw(&mut self.rng))
                }
            }
        }
    }
}

/// One web page.
#[derive(Clone, Debug, Serialize)]
pub struct PageRow {
    pub id: u64,
    pub app: String,
    /// When the primary object was requested (its connection opened); `None`:
    /// a page drawn ahead that never started.
    pub start_s: Option<f64>,
    /// When the last object completed.
    pub end_s: Option<f64>,
    pub delay_s: Option<f64>,
    pub objects: u32,
    pub bytes: u64,
    pub completed: bool,
}

/// A web page being fetched (or a persistent client's transfer).
pub struct PageState {
    pub app: u32,
    /// `None` until a page drawn ahead starts.
    pub start: Option<Time>,
    /// Transfers still running.
    pending: u32,
    /// Embedded object sizes, not yet asked for.
    embedded: Vec<u64>,
    pub objects: u32,
    pub bytes: u64,
    pub end: Option<Time>,
}

/// The tag of a transfer that belongs to no page.
pub const NO_PAGE: u64 = u64::MAX;

/// Most connections one web application with a `cycle` may open in a run,
/// as for a burst's flows: its pages are opened whatever the network does,
/// so a short cycle over a long run would take the machine's memory.
pub const MAX_CYCLE_CONNECTIONS: u64 = 10_000_000;

/// The most pages a web application with a page every `cycle`, starting at
/// `start`, can start by `stop`: page k starts no earlier than
/// start + k x cycle, open loop or closed. `None`: no stop, no bound.
pub fn cycle_pages(start: Time, cycle: Dur, stop: Option<Time>) -> Option<u64> {
    stop.map(|stop| if start > stop { 0 } else { (stop.as_ns() - start.as_ns()) / cycle.as_ns().max(1) + 1 })
}

fn page_tag(page: u32, primary: bool) -> u64 {
    (u64::from(page) << 1) | u64::from(primary)
}

fn untag(tag: u64) -> Option<(u32, bool)> {
    (tag != NO_PAGE).then_some(((tag >> 1) as u32, tag & 1 == 1))
}

/// Every application of a run, and the pages they fetched.
#[derive(Default)]
pub struct Apps {
    pub apps: Vec<App>,
    pub pages: Vec<PageState>,
    /// Applications the run waits for that have not finished.
    awaiting: u32,
    /// Set when the last application the run waits for has finished.
    pub all_finished: bool,
}

impl Apps {
    /// Have the run wait for application `a`: [`Apps::all_finished`] is set
    /// once it and every other awaited application has finished. Returns
    /// false if `a` never finishes ([`App::completions_to_finish`]).
    pub fn wait_for(&mut self, a: u32) -> bool {
        let app = &mut self.apps[a as usize];
        let Some(n) = app.completions_to_finish() else { return false };
        if app.awaited == 0 && n > 0 {
            app.awaited = n;
            self.awaiting += 1;
        }
        true
    }

    /// One of application `a`'s transfers (or pages) completed.
    fn completed_one(&mut self, a: u32) {
        let app = &mut self.apps[a as usize];
        if app.awaited > 0 {
            app.awaited -= 1;
            if app.awaited == 0 {
                self.awaiting -= 1;
                self.all_finished = self.awaiting == 0;
            }
        }
    }

    /// Page `p` ends at `now` (once).
    fn end_page(&mut self, p: u32, now: Time) {
        let pg = &mut self.pages[p as usize];
        pg.pending = 0;
        if pg.end.is_none() {
            pg.end = Some(now);
            let a = pg.app;
            self.completed_one(a);
        }
    }

    /// The pages table: one row per page.
    pub fn page_rows(&self) -> Vec<PageRow> {
        self.pages
            .iter()
            .enumerate()
            .map(|(i, p)| PageRow {
                id: i as u64,
                app: self.apps[p.app as usize].name.clone(),
                start_s: p.start.map(Time::as_secs_f64),
                end_s: p.end.map(Time::as_secs_f64),
                delay_s: p.end.zip(p.start).map(|(e, s)| (e - s).as_secs_f64()),
                objects: p.objects,
                bytes: p.bytes,
                completed: p.end.is_some(),
            })
            .collect()
    }

    /// The page a connection with `tag` belongs to.
    pub fn page_of(&self, tag: u64) -> Option<u64> {
        untag(tag).map(|(p, _)| u64::from(p))
    }

    fn open<T: Transport>(&mut self, a: u32, size: Option<u64>, tag: u64, t: &mut T) {
        self.open_from(a, 0, size, tag, t);
    }

    fn open_from<T: Transport>(&mut self, a: u32, server: u32, size: Option<u64>, tag: u64, t: &mut T) {
        self.apps[a as usize].transfers_started += 1;
        t.open(server, size, tag);
    }

    fn new_page(&mut self, a: u32, start: Time, objects: u32, bytes: u64, embedded: Vec<u64>) -> u32 {
        self.apps[a as usize].pages_started += 1;
        self.pages.push(PageState { app: a, start: Some(start), pending: 1, embedded, objects, bytes, end: None });
        (self.pages.len() - 1) as u32
    }

    /// Draw application `a`'s `n` pages ahead, in order, from its stream.
    fn plan_pages(&mut self, a: u32, w: &WebConfig, n: u64) {
        for _ in 0..n {
            let app = &mut self.apps[a as usize];
            let primary = w.primary.draw(&mut app.rng);
            let embedded: Vec<u64> = (0..w.embedded).map(|_| w.object.draw(&mut app.rng)).collect();
            let bytes = primary + embedded.iter().sum::<u64>();
            let objects = 1 + embedded.len() as u32;
            self.pages.push(PageState { app: a, start: None, pending: 1, embedded, objects, bytes, end: None });
            let id = (self.pages.len() - 1) as u32;
            self.apps[a as usize].planned.push_back(id);
        }
        self.apps[a as usize].planned_drawn = true;
    }

    /// Start application `a`'s next page drawn ahead, if any: true if one started.
    fn start_planned<T: Transport>(&mut self, a: u32, t: &mut T) -> bool {
        let Some(p) = self.apps[a as usize].planned.pop_front() else { return false };
        self.apps[a as usize].pages_started += 1;
        self.pages[p as usize].start = Some(t.now());
        self.fetch_page(a, p, t);
        true
    }

    /// Ask for page `p` of web application `a`: its primary object, and with
    /// `embedded_with_primary` the embedded ones at the same time.
    fn fetch_page<T: Transport>(&mut self, a: u32, p: u32, t: &mut T) {
        let (with, http11, persistent) = match &self.apps[a as usize].kind {
            AppKind::Web(w) => (w.embedded_with_primary, w.http11, w.persistent),
            _ => (false, false, false),
        };
        let pg = &mut self.pages[p as usize];
        if persistent {
            pg.embedded.clear();
            let (bytes, objects) = (pg.bytes, pg.objects);
            let app = &mut self.apps[a as usize];
            app.on_conn.push_back(p);
            app.transfers_started += 1;
            match app.conn {
                Some(c) => t.exchange(c, app.request_bytes.saturating_mul(objects), bytes, page_tag(p, true)),
                None => app.conn = Some(t.open(0, Some(bytes), page_tag(p, true))),
            }
            return;
        }
        let primary = pg.bytes - pg.embedded.iter().sum::<u64>();
        if !with || pg.embedded.is_empty() {
            self.open(a, Some(primary), page_tag(p, true), t);
            return;
        }
        let embedded = std::mem::take(&mut pg.embedded);
        if http11 {
            let bytes = pg.bytes;
            self.open(a, Some(bytes), page_tag(p, true), t);
            return;
        }
        pg.pending += embedded.len() as u32;
        self.open(a, Some(primary), page_tag(p, true), t);
        for size in embedded {
            self.open(a, Some(size), page_tag(p, false), t);
        }
    }

    /// Application `a`'s wake-up: a new transfer, page or burst.
    pub fn on_wake<T: Transport>(&mut self, a: u32, t: &mut T) {
        let now = t.now();
        let app = &mut self.apps[a as usize];
        match &app.kind {
            AppKind::Web(w) if w.cycle.is_some() && w.pages.is_some() => {
                let (w, cycle) = (w.clone(), w.cycle.expect("a cycle"));
                if !app.planned_drawn {
                    self.plan_pages(a, &w, w.pages.expect("a page count"));
                }
                self.start_planned(a, t);
                if !w.cycle_closed && !self.apps[a as usize].planned.is_empty() {
                    t.wake_at(now + cycle);
                }
            }
            AppKind::Web(w) => {
                // Draw the page: primary first, then the embedded objects, from the app's stream.
                let primary = w.primary.draw(&mut app.rng);
                let embedded: Vec<u64> = (0..w.embedded).map(|_| w.object.draw(&mut app.rng)).collect();
                let bytes = primary + embedded.iter().sum::<u64>();
                let objects = 1 + embedded.len() as u32;
                // The primary first; the embedded objects when it completes (or with it).
                let cycle = w.cycle.filter(|_| !w.cycle_closed);
                let page = self.new_page(a, now, objects, bytes, embedded);
                self.fetch_page(a, page, t);
                if let Some(c) = cycle {
                    t.wake_at(now + c);
                }
            }
            AppKind::Repeat { persistent: true, .. } => {
                // Each transfer of a persistent client is a one-object page.
                let size = app.size.unwrap_or(0);
                let page = self.new_page(a, now, 1, size, Vec::new());
                self.open(a, Some(size), page_tag(page, true), t);
            }
            &AppKind::Burst { flows, bytes, servers } => {
                let (each, extra) = (bytes / u64::from(flows), bytes % u64::from(flows));
                for i in 0..flows {
                    self.open_from(a, i % servers, Some(each + u64::from(u64::from(i) < extra)), NO_PAGE, t);
                }
            }
            AppKind::Bulk | AppKind::Repeat { .. } => {
                let size = app.size;
                self.open(a, size, NO_PAGE, t);
            }
        }
    }

    /// The connections the applications that start by `stop` open as they
    /// start (a burst one per flow, every other kind at least one).
    pub fn opened_at_start(&self, stop: Option<Time>) -> usize {
        self.apps
            .iter()
            .filter(|a| stop.is_none_or(|s| a.start <= s))
            .map(|a| match a.kind {
                AppKind::Burst { flows, .. } => flows as usize,
                _ => 1,
            })
            .sum()
    }

    /// Whether any application opens connections as it runs (one per
    /// transfer or object), beyond those it opens as it starts.
    pub fn open_while_running(&self) -> bool {
        self.apps.iter().any(|a| matches!(a.kind, AppKind::Web(_) | AppKind::Repeat { .. }))
    }

    /// Whether application `a` keeps connection `c` for later transfers
    /// (a persistent web client's).
    pub fn holds(&self, a: u32, c: u32) -> bool {
        self.apps[a as usize].conn == Some(c)
    }

    /// An event of connection `conn` (tagged `tag`) of application `a`.
    pub fn on_event<T: Transport>(&mut self, a: u32, conn: u32, tag: u64, ev: ConnEvent, t: &mut T) {
        match ev {
            ConnEvent::Complete => self.on_complete(a, conn, tag, t),
        }
    }

    /// A transfer's client has every byte.
    fn on_complete<T: Transport>(&mut self, a: u32, c: u32, tag: u64, t: &mut T) {
        let now = t.now();
        let Some((p, primary)) = untag(tag) else {
            self.completed_one(a);
            if let Some(at) = self.apps[a as usize].next_start(now) {
                t.wake_at(at);
            }
            return;
        };
        if self.apps[a as usize].conn == Some(c) {
            // A persistent client's page has arrived, and with it every page
            // asked for before it; page `p` then ends as any page does.
            while let Some(q) = self.apps[a as usize].on_conn.pop_front().filter(|&q| q != p) {
                self.end_page(q, now);
            }
        }
        let app = &self.apps[a as usize];
        let pg = &mut self.pages[p as usize];
        if let AppKind::Web(w) = &app.kind {
            if primary && w.http11 && !pg.embedded.is_empty() {
                // HTTP/1.1: the embedded objects are requested, pipelined, on
                // the same connection once the primary has arrived.
                let bytes: u64 = std::mem::take(&mut pg.embedded).iter().sum();
                let req = app.request_bytes.saturating_mul(w.embedded);
                t.exchange(c, req, bytes, page_tag(p, false));
                return;
            }
        }
        pg.pending -= 1;
        if primary && !pg.embedded.is_empty() {
            // HTTP/1.0: the embedded objects, each on its own connection, at once.
            let embedded = std::mem::take(&mut pg.embedded);
            pg.pending += embedded.len() as u32;
            for size in embedded {
                self.open(a, Some(size), page_tag(p, false), t);
            }
            return;
        }
        if pg.pending > 0 {
            return;
        }
        let started = pg.start.unwrap_or(now);
        self.end_page(p, now);
        let app = &mut self.apps[a as usize];
        if let AppKind::Web(w) = &app.kind {
            if let Some(c) = w.cycle {
                // Open loop: the next page is already due. Closed: the next
                // a cycle after this one started, or now if that has passed.
                if w.cycle_closed && (!app.planned.is_empty() || (w.pages.is_none() && !app.planned_drawn)) {
                    t.wake_at(now.max(started + c));
                }
                return;
            }
        }
        let mut next = app.next_start(now);
        if let AppKind::Web(w) = &app.kind {
            if w.think_from_start {
                next = next.map(|at| now.max(started + (at - now)));
            }
        }
        if next == Some(now) && app.persistent() && t.has_handshake(c) {
            // The next transfer at once, asked for on this connection.
            app.transfers_started += 1;
            let (size, req) = (app.size.unwrap_or(0), app.request_bytes);
            let page = self.new_page(a, now, 1, size, Vec::new());
            t.exchange(c, req, size, page_tag(page, true));
            return;
        }
        if let Some(at) = next {
            t.wake_at(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transport that records what the applications ask for.
    #[derive(Default)]
    struct Recorder {
        now: Time,
        opened: Vec<(Option<u64>, u64)>,
        servers: Vec<u32>,
        exchanges: Vec<(u32, u32, u64, u64)>,
        wakes: Vec<Time>,
    }

    impl Transport for Recorder {
        fn now(&self) -> Time {
            self.now
        }
        fn open(&mut self, server: u32, size: Option<u64>, tag: u64) -> u32 {
            self.opened.push((size, tag));
            self.servers.push(server);
            (self.opened.len() - 1) as u32
        }
        fn exchange(&mut self, conn: u32, bytes: u32, reply: u64, tag: u64) {
            self.exchanges.push((conn, bytes, reply, tag));
        }
        fn has_handshake(&self, _conn: u32) -> bool {
            true
        }
        fn wake_at(&mut self, at: Time) {
            self.wakes.push(at);
        }
    }

    /// A web client of constant sizes (primary 1000 B, objects 2000 B) and
    /// think time, one connection per object, no cycle.
    fn web(http11: bool, embedded: u32, think_s: u64, pages: Option<u64>) -> WebConfig {
        WebConfig { http11, embedded, primary: SizeDist::Constant(1000), object: SizeDist::Constant(2000),
                    think: Think::Constant(crate::time::Dur::from_secs(think_s)), pages, cycle: None, cycle_closed: false, think_from_start: false,
                    embedded_with_primary: false, persistent: false } // fmt: skip
    }

    fn app(kind: AppKind, size: Option<u64>) -> Apps {
        let a = App::new("a".into(), 0, 1, Time::ZERO, size, kind, RngStream::new(1, "app/a"), 250);
        Apps { apps: vec![a], ..Apps::default() }
    }

    #[test]
    fn a_burst_opens_every_connection_at_once_and_splits_the_bytes() {
        let mut apps = app(AppKind::Burst { flows: 6, bytes: 180_004, servers: 1 }, None);
        let mut t = Recorder::default();
        apps.on_wake(0, &mut t);
        let sizes: Vec<u64> = t.opened.iter().map(|&(s, _)| s.unwrap()).collect();
        assert_eq!(sizes, [30_001, 30_001, 30_001, 30_001, 30_000, 30_000]);
        assert_eq!(t.servers, [0; 6]);
        // Completions start nothing more.
        for c in 0..6 {
            apps.on_event(0, c, NO_PAGE, ConnEvent::Complete, &mut t);
        }
        assert!(t.wakes.is_empty() && t.exchanges.is_empty());
    }

    #[test]
    fn an_awaited_burst_finishes_with_its_last_flow_and_an_unbounded_transfer_never() {
        let mut apps = app(AppKind::Burst { flows: 3, bytes: 3_000, servers: 1 }, None);
        assert!(apps.wait_for(0));
        let mut t = Recorder::default();
        apps.on_wake(0, &mut t);
        for c in 0..3 {
            assert!(!apps.all_finished, "finished after {c} of 3 flows");
            apps.on_event(0, c, NO_PAGE, ConnEvent::Complete, &mut t);
        }
        assert!(apps.all_finished);
        assert!(!app(AppKind::Bulk, None).wait_for(0));
        assert!(app(AppKind::Bulk, Some(1)).wait_for(0));
        assert!(!app(AppKind::Repeat { think: Think::Constant(crate::time::Dur::from_secs(1)), count: None, persistent: false }, Some(1)).wait_for(0));
    }

    #[test]
    fn an_awaited_web_client_finishes_with_its_last_page_not_its_last_object() {
        let mut apps = app(AppKind::Web(Box::new(web(false, 2, 1, Some(2)))), None);
        assert!(apps.wait_for(0));
        let mut t = Recorder::default();
        for p in 0..2 {
            apps.on_wake(0, &mut t);
            // The primary, then the two embedded objects: three completions a page.
            apps.on_event(0, 0, page_tag(p, true), ConnEvent::Complete, &mut t);
            apps.on_event(0, 1, page_tag(p, false), ConnEvent::Complete, &mut t);
            assert!(!apps.all_finished);
            apps.on_event(0, 2, page_tag(p, false), ConnEvent::Complete, &mut t);
            assert_eq!(apps.all_finished, p == 1, "page {p}");
        }
    }

    #[test]
    fn a_burst_takes_its_servers_in_turn() {
        let mut apps = app(AppKind::Burst { flows: 5, bytes: 5_000, servers: 3 }, None);
        let mut t = Recorder::default();
        apps.on_wake(0, &mut t);
        assert_eq!(t.servers, [0, 1, 2, 0, 1]);
        assert!(t.opened.iter().all(|&(s, _)| s == Some(1_000)));
    }

    #[test]
    fn http11_asks_for_the_embedded_objects_on_the_primary_connection() {
        let mut apps = app(AppKind::Web(Box::new(web(true, 3, 2, Some(1)))), None);
        let mut t = Recorder::default();
        apps.on_wake(0, &mut t);
        assert_eq!(t.opened, [(Some(1000), page_tag(0, true))]);
        apps.on_event(0, 0, page_tag(0, true), ConnEvent::Complete, &mut t);
        assert_eq!(t.exchanges, [(0, 750, 6000, page_tag(0, false))]);
        t.now = Time::from_ns(5);
        apps.on_event(0, 0, page_tag(0, false), ConnEvent::Complete, &mut t);
        assert_eq!(apps.pages[0].end, Some(Time::from_ns(5)));
        assert!(t.wakes.is_empty(), "one page only");
    }

    #[test]
    fn embedded_with_primary_asks_for_the_whole_page_at_once() {
        for http11 in [false, true] {
            let web = WebConfig { http11, embedded: 3, primary: SizeDist::Constant(1000), object: SizeDist::Constant(2000),
                                  think: Think::Constant(Dur::from_secs(2)), pages: Some(1), cycle: None, cycle_closed: false,
                                  think_from_start: false, embedded_with_primary: true, persistent: false }; // fmt: skip
            let mut apps = app(AppKind::Web(Box::new(web)), None);
            let mut t = Recorder::default();
            apps.on_wake(0, &mut t);
            let tags: Vec<u64> = t.opened.iter().map(|o| o.1).collect();
            if http11 {
                // One connection, one reply: the page's 7000 bytes.
                assert_eq!(t.opened, [(Some(7000), page_tag(0, true))]);
            } else {
                // Four connections at once: the primary and the three embedded objects.
                assert_eq!(t.opened.iter().map(|o| o.0).collect::<Vec<_>>(), [Some(1000), Some(2000), Some(2000), Some(2000)]);
                assert_eq!(tags, [page_tag(0, true), page_tag(0, false), page_tag(0, false), page_tag(0, false)]);
            }
            // The page ends when its last transfer does, whatever the order, and nothing more is asked for.
            for (k, &tag) in tags.iter().enumerate().rev() {
                assert!(apps.pages[0].end.is_none());
                t.now = Time::from_ns(10 + k as u64);
                apps.on_event(0, k as u32, tag, ConnEvent::Complete, &mut t);
            }
            assert_eq!(apps.pages[0].end, Some(Time::from_ns(10)));
            assert_eq!(t.opened.len(), tags.len());
            assert!(t.exchanges.is_empty());
        }
    }

    #[test]
    fn a_persistent_client_pipelines_its_pages_on_one_connection() {
        let s = |x: u64| Time::from_ns(x * 1_000_000_000);
        let web = WebConfig { http11: true, embedded: 2, primary: SizeDist::Constant(1000), object: SizeDist::Constant(2000),
                              think: Think::Constant(Dur::from_secs(2)), pages: None, cycle: Some(Dur::from_secs(10)), cycle_closed: false,
                              think_from_start: false, embedded_with_primary: false, persistent: true }; // fmt: skip
        let mut apps = app(AppKind::Web(Box::new(web)), None);
        let mut t = Recorder::default();
        // Three cycles before any page has arrived: one connection, then each
        // page as one reply (5,000 bytes) with a request per object (3 x 250 B).
        for k in 0..3 {
            t.now = s(10 * k);
            apps.on_wake(0, &mut t);
        }
        assert_eq!(t.opened, [(Some(5000), page_tag(0, true))]);
        assert_eq!(t.exchanges, [(0, 750, 5000, page_tag(1, true)), (0, 750, 5000, page_tag(2, true))]);
        assert_eq!(t.wakes, [s(10), s(20), s(30)], "open loop: a page every cycle");
        // Page 1's last byte arrives with page 0's (the connection reports page 1):
        // both end then; page 2 later, alone.
        t.now = s(25);
        apps.on_event(0, 0, page_tag(1, true), ConnEvent::Complete, &mut t);
        let ends: Vec<Option<Time>> = apps.pages.iter().map(|p| p.end).collect();
        assert_eq!(ends, [Some(s(25)), Some(s(25)), None]);
        t.now = s(27);
        apps.on_event(0, 0, page_tag(2, true), ConnEvent::Complete, &mut t);
        assert_eq!(apps.pages[2].end, Some(s(27)));
        assert_eq!((t.opened.len(), t.exchanges.len(), t.wakes.len()), (1, 2, 3), "completions ask for nothing more");
        assert_eq!(apps.apps[0].transfers_started, 3);
    }

    #[test]
    fn a_persistent_client_with_think_times_asks_for_its_next_page_on_the_same_connection() {
        let s = |x: u64| Time::from_ns(x * 1_000_000_000);
        let web = WebConfig { http11: true, embedded: 1, primary: SizeDist::Constant(1000), object: SizeDist::Constant(2000),
                              think: Think::Constant(Dur::from_secs(2)), pages: Some(2), cycle: None, cycle_closed: false,
                              think_from_start: false, embedded_with_primary: false, persistent: true }; // fmt: skip
        let mut apps = app(AppKind::Web(Box::new(web)), None);
        let mut t = Recorder::default();
        apps.on_wake(0, &mut t);
        t.now = s(1);
        apps.on_event(0, 0, page_tag(0, true), ConnEvent::Complete, &mut t);
        assert_eq!((apps.pages[0].end, t.wakes.as_slice()), (Some(s(1)), [s(3)].as_slice()), "the next page a think time after");
        t.now = s(3);
        apps.on_wake(0, &mut t);
        assert_eq!(t.opened, [(Some(3000), page_tag(0, true))]);
        assert_eq!(t.exchanges, [(0, 500, 3000, page_tag(1, true))]);
        t.now = s(4);
        apps.on_event(0, 0, page_tag(1, true), ConnEvent::Complete, &mut t);
        assert_eq!(apps.pages[1].end, Some(s(4)));
        assert_eq!(t.wakes, [s(3)], "two pages only");
    }

    #[test]
    fn think_from_start_counts_the_think_time_from_the_request() {
        let s = |x: u64| Time::from_ns(x * 1_000_000_000);
        for (from_start, done, next) in [(false, 1, 3), (true, 1, 2), (true, 3, 3)] {
            let web = WebConfig { http11: false, embedded: 0, primary: SizeDist::Constant(1000), object: SizeDist::Constant(2000),
                                  think: Think::Constant(Dur::from_secs(2)), pages: Some(2), cycle: None, cycle_closed: false,
                                  think_from_start: from_start, embedded_with_primary: false, persistent: false }; // fmt: skip
            let mut apps = app(AppKind::Web(Box::new(web)), None);
            let mut t = Recorder::default();
            apps.on_wake(0, &mut t);
            // The page (no embedded objects) completes `done` s after it was asked for at 0.
            t.now = s(done);
            apps.on_event(0, 0, page_tag(0, true), ConnEvent::Complete, &mut t);
            assert_eq!(t.wakes, [s(next)], "from start {from_start}, page done at {done} s");
        }
    }

    #[test]
    fn the_pages_a_cycle_can_start_by_the_stop() {
        let s = |x: u64| Time::from_ns(x * 1_000_000_000);
        let c = Dur::from_secs(10);
        // Page k no earlier than start + k cycles: 1, 11, ..., 91 by 100 s, and one at the stop itself.
        assert_eq!(cycle_pages(s(1), c, Some(s(100))), Some(10));
        assert_eq!(cycle_pages(s(0), c, Some(s(100))), Some(11));
        assert_eq!(cycle_pages(s(100), c, Some(s(100))), Some(1));
        assert_eq!(cycle_pages(s(101), c, Some(s(100))), Some(0));
        assert_eq!(cycle_pages(s(0), c, None), None);
    }

    #[test]
    fn a_cycle_starts_a_page_every_cycle_whatever_the_last_one_does() {
        let cycle = Dur::from_secs(10);
        let web = WebConfig { http11: true, embedded: 4, primary: SizeDist::Constant(1000), object: SizeDist::Constant(2000),
                              think: Think::Constant(Dur::from_secs(2)), pages: Some(2), cycle: Some(cycle), cycle_closed: false, think_from_start: false,
                              embedded_with_primary: false, persistent: false }; // fmt: skip
        let mut apps = app(AppKind::Web(Box::new(web)), None);
        let mut t = Recorder::default();
        // Page 0 opens at 0 and asks for page 1 at 10 s at once.
        apps.on_wake(0, &mut t);
        assert_eq!((t.opened.len(), t.wakes.clone()), (1, vec![Time::from_ns(10_000_000_000)]));
        // Its completion schedules nothing.
        apps.on_event(0, 0, page_tag(0, true), ConnEvent::Complete, &mut t);
        t.now = Time::from_ns(3_000_000_000);
        apps.on_event(0, 0, page_tag(0, false), ConnEvent::Complete, &mut t);
        assert_eq!(t.wakes.len(), 1);
        // Page 1 opens a new connection at 10 s, page 0 or not; it is the last.
        t.now = Time::from_ns(10_000_000_000);
        apps.on_wake(0, &mut t);
        assert_eq!((t.opened.len(), t.wakes.len()), (2, 1));
    }

    #[test]
    fn a_closed_cycle_waits_for_the_page_and_plans_every_page_ahead() {
        let cycle = Dur::from_secs(10);
        let web = WebConfig { http11: true, embedded: 1, primary: SizeDist::Constant(1000), object: SizeDist::Constant(2000),
                              think: Think::Constant(Dur::from_secs(2)), pages: Some(3), cycle: Some(cycle), cycle_closed: true, think_from_start: false,
                              embedded_with_primary: false, persistent: false }; // fmt: skip
        let mut apps = app(AppKind::Web(Box::new(web)), None);
        let mut t = Recorder::default();
        apps.on_wake(0, &mut t);
        // All three pages exist from the start; one started, no wake-up yet.
        assert_eq!(apps.page_rows().iter().map(|p| p.start_s).collect::<Vec<_>>(), [Some(0.0), None, None]);
        assert!(t.wakes.is_empty());
        // Page 0 takes 14 s: page 1 starts at once when it completes.
        apps.on_event(0, 0, page_tag(0, true), ConnEvent::Complete, &mut t);
        t.now = Time::from_ns(14_000_000_000);
        apps.on_event(0, 0, page_tag(0, false), ConnEvent::Complete, &mut t);
        assert_eq!(t.wakes, [Time::from_ns(14_000_000_000)]);
        // Page 1 (started at 14 s) takes 1 s: page 2 at 24 s.
        apps.on_wake(0, &mut t);
        apps.on_event(0, 1, page_tag(1, true), ConnEvent::Complete, &mut t);
        t.now = Time::from_ns(15_000_000_000);
        apps.on_event(0, 1, page_tag(1, false), ConnEvent::Complete, &mut t);
        assert_eq!(t.wakes[1], Time::from_ns(24_000_000_000));
        assert_eq!(apps.page_rows()[2].bytes, 3000);
    }
}
