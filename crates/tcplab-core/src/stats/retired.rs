//! The rows of the connections a run recycles ([`crate::tcp::Endpoints::recycle`]).
//!
//! A long run of short transfers finishes millions of them: an hour of 1,000
//! web clients, 4.6 million rows of some 300 bytes. Kept as rows until the
//! run ends, they and the columns made of them at the end
//! ([`super::to_json_columns`]) were both in memory at once. A caller that
//! wants columns ([`Retired::into_columns`]) has them put into columns as
//! the run goes, on a helper thread, once [`HELPER_ROWS`] rows are waiting:
//! the loop hands the helper batches of rows and the helper adds them to the
//! columns in the order of their flow numbers, which is the order of the
//! results' rows, so the columns are those `Columns::of` makes of the rows
//! at the end. A row whose flow number comes after that of a connection
//! still open waits for it on the helper (a run with a connection that stays
//! open holds the rows after it as before).

use super::columns::{Columns, Error};
use super::FlowRow;
use std::collections::VecDeque;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Rows retired before a helper starts: below it, a run's rows are few
/// enough to keep (some 10 MB).
pub const HELPER_ROWS: usize = 1 << 15;

/// Rows a batch hands the helper at once.
pub const BATCH_ROWS: usize = 1 << 12;

/// Batches on their way to the helper: past them, the loop waits for it.
const QUEUED_BATCHES: usize = 64;

/// The names the helper writes for the rows' numbers: each application's and
/// each host's.
pub struct Names {
    pub apps: Vec<String>,
    pub nodes: Vec<String>,
}

/// The rows of recycled connections: named as they come, or where columns
/// were asked for, numbered, and past [`HELPER_ROWS`] of them, put into
/// columns by a helper.
pub struct Retired {
    /// The rows, named (columns not asked for).
    named: Vec<FlowRow>,
    /// Columns were asked for: the rows are kept numbered.
    numbered: bool,
    /// Columns asked for: the rows not handed over, all of them without a
    /// helper, the next batch with one.
    rows: Vec<FlowRow<u32>>,
    /// Columns asked for and no helper started yet: the names it will need.
    for_helper: Option<Names>,
    helper: Option<Helper>,
    /// [`HELPER_ROWS`] and [`BATCH_ROWS`], lower in tests.
    pub(crate) helper_rows: usize,
    pub(crate) batch_rows: usize,
}

struct Helper {
    batches: mpsc::SyncSender<Vec<FlowRow<u32>>>,
    done: JoinHandle<Result<InOrder, Error>>,
}

impl Default for Retired {
    fn default() -> Self {
        Retired { named: Vec::new(), numbered: false, rows: Vec::new(), for_helper: None, helper: None, helper_rows: HELPER_ROWS, batch_rows: BATCH_ROWS }
    }
}

/// The rows [`Retired::finish`] leaves, in no order: every flow numbered
/// from `in_columns` on that retired.
pub struct Finished {
    /// How many flows' rows a helper put into columns: those numbered below it.
    pub in_columns: usize,
    pub named: Vec<FlowRow>,
    pub numbered: Vec<FlowRow<u32>>,
}

impl Retired {
    /// Put the rows into columns as they come (past [`HELPER_ROWS`] of them),
    /// naming them by `names`.
    pub fn into_columns(&mut self, names: Names) {
        (self.numbered, self.for_helper) = (true, Some(names));
    }

    /// Whether the rows are all here (no helper has taken any).
    pub fn all_rows(&self) -> bool {
        self.helper.is_none()
    }

    /// A copy of the rows here (all of them where [`Retired::all_rows`]).
    pub fn copy(&self) -> Finished {
        Finished { in_columns: 0, named: self.named.clone(), numbered: self.rows.clone() }
    }

    /// Keep `row`; where no columns were asked for, as `name` names it.
    pub fn push(&mut self, row: FlowRow<u32>, name: impl FnOnce(FlowRow<u32>) -> FlowRow) {
        if !self.numbered {
            return self.named.push(name(row));
        }
        self.rows.push(row);
        let due = match (&self.helper, &self.for_helper) {
            (Some(_), _) => self.batch_rows,
            (None, Some(_)) => self.helper_rows,
            // No helper could start: the rows stay here.
            (None, None) => return,
        };
        if self.rows.len() >= due {
            self.hand_over();
        }
    }

    /// Hand the rows here to the helper, starting it first (with the
    /// names) if need be. Where no thread can start, the rows stay here for
    /// good, and the run's end makes their columns, as without a helper.
    fn hand_over(&mut self) {
        if self.helper.is_none() {
            let Some(names) = self.for_helper.take() else { return };
            let (batches, arrive) = mpsc::sync_channel(QUEUED_BATCHES);
            match std::thread::Builder::new().name("tcplab-rows".into()).spawn(move || InOrder::of(arrive, &names)) {
                Ok(done) => self.helper = Some(Helper { batches, done }),
                Err(_) => return,
            }
        }
        let batch = std::mem::replace(&mut self.rows, Vec::with_capacity(self.batch_rows));
        if let Some(h) = &self.helper {
            if let Err(mpsc::SendError(batch)) = h.batches.send(batch) {
                // The helper stopped on an error or a panic, which `finish`
                // reports; keep the rows meanwhile, and send no more.
                self.rows = batch;
                self.batch_rows = usize::MAX;
            }
        }
    }

    /// The columns of the rows a helper took (`None` without a helper), and
    /// the other rows.
    pub fn finish(self) -> Result<(Option<Columns>, Finished), Error> {
        let Retired { named, rows, helper, .. } = self;
        let Some(Helper { batches, done }) = helper else { return Ok((None, Finished { in_columns: 0, named, numbered: rows })) };
        drop(batches);
        let order = done.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        let mut numbered: Vec<FlowRow<u32>> = order.waiting.into_iter().flatten().collect();
        numbered.extend(rows);
        let in_columns = order.cols.rows();
        Ok((Some(order.cols), Finished { in_columns, named, numbered }))
    }
}

/// The helper's columns, and the rows waiting for a flow numbered before them.
#[derive(Default)]
struct InOrder {
    cols: Columns,
    /// Slot `k` holds the row of flow `cols.rows() + k`, if it came.
    waiting: VecDeque<Option<FlowRow<u32>>>,
}

impl InOrder {
    /// Every batch that arrives, until the loop's end closes the channel.
    fn of(batches: mpsc::Receiver<Vec<FlowRow<u32>>>, names: &Names) -> Result<InOrder, Error> {
        let mut order = InOrder::default();
        for batch in batches {
            for row in batch {
                order.take(row, names)?;
            }
        }
        Ok(order)
    }

    /// Add `row` to the columns, with the rows waiting for it, if every flow
    /// numbered before it is in; otherwise keep it waiting.
    fn take(&mut self, row: FlowRow<u32>, names: &Names) -> Result<(), Error> {
        let k = row.id.checked_sub(self.cols.rows() as u64).map(|k| k as usize).ok_or_else(|| Error(format!("flow {} retired twice", row.id)))?;
        if self.waiting.len() <= k {
            self.waiting.resize_with(k + 1, || None);
        }
        if self.waiting[k].replace(row).is_some() {
            return Err(Error(format!("flow {} retired twice", self.cols.rows() + k)));
        }
        while let Some(Some(_)) = self.waiting.front() {
            let row = self.waiting.pop_front().flatten().expect("a row, just seen");
            self.cols.push_row(&row.named(|a| names.apps[a as usize].as_str(), |n| names.nodes[n as usize].as_str()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names() -> Names {
        Names { apps: vec!["a".into(), "b,c".into(), "d".into()], nodes: (0..5).map(|i| format!("n{i}")).collect() }
    }

    /// Flow `id`'s row: names by number, some values missing (a page, an end).
    fn row(id: u64) -> FlowRow<u32> {
        let done = (id % 4 != 1).then_some(id as f64 / 8.0);
        FlowRow {
            id,
            app: (id % 3) as u32,
            page: (!id.is_multiple_of(5)).then_some(id / 2),
            src: (id % 5) as u32,
            dst: ((id + 2) % 5) as u32,
            cc: if id.is_multiple_of(2) { "reno" } else { "sack" },
            iw: 3.0,
            bytes: Some(1000 + id),
            bytes_delivered: 1000 + id,
            start_s: id as f64 / 10.0,
            end_s: done,
            fct_s: done,
            goodput_bps: 8.5 * id as f64,
            data_pkts: id,
            retx_pkts: id % 3,
            retx_fast_pkts: id % 2,
            retx_timeout_pkts: id / 3,
            timeouts: 0,
            fast_retx: 1,
            dupacks: 2,
            sack_blocks: 3,
            ss_entries: 4,
            ca_entries: 5,
            rwnd_stalls: 6,
            send_stalls: 7,
            rtt_samples: id,
            srtt_s: (id % 7 != 3).then_some(0.25),
            syn_sent: 1,
            synack_sent: 1,
            closed: id.is_multiple_of(2),
            aborted: id % 9 == 4,
            completed: done.is_some(),
        }
    }

    fn named(r: FlowRow<u32>, names: &Names) -> FlowRow<String> {
        r.named(|a| names.apps[a as usize].clone(), |n| names.nodes[n as usize].clone())
    }

    /// The JSON text of `c` with its blobs.
    fn forms(c: Columns) -> (String, Vec<Vec<u8>>) {
        let (mut out, mut blobs) = (Vec::new(), Vec::new());
        c.write_json(&mut out, Some(&mut blobs));
        (String::from_utf8(out).unwrap(), blobs)
    }

    proptest! {
        #[test]
        fn rows_retired_in_any_order_make_the_columns_of_every_row_in_order(
            order in Just((0..60u64).collect::<Vec<_>>()).prop_shuffle(),
            helper_rows in 1usize..80,
            batch_rows in 1usize..9,
            open in proptest::collection::btree_set(0u64..60, 0..4),
        ) {
            // The flows in `open` are still open at the end: their rows come
            // with the results' rows, as the others do that the helper did not take.
            let mut retired = Retired { helper_rows, batch_rows, ..Retired::default() };
            retired.into_columns(names());
            let sent = order.iter().filter(|id| !open.contains(id)).count();
            for &id in order.iter().filter(|id| !open.contains(id)) {
                retired.push(row(id), |_| unreachable!("columns were asked for"));
            }
            prop_assert_eq!(retired.all_rows(), sent < helper_rows);
            let (cols, Finished { in_columns, named: as_rows, numbered: rest }) = retired.finish().unwrap();
            prop_assert_eq!(in_columns, cols.as_ref().map_or(0, Columns::rows));
            prop_assert!(as_rows.is_empty());
            let names = names();
            let mut left: Vec<FlowRow<String>> = rest.into_iter().chain(open.iter().map(|&id| row(id))).map(|r| named(r, &names)).collect();
            left.sort_by_key(|r| r.id);
            let every: Vec<FlowRow<String>> = (0..60).map(|id| named(row(id), &names)).collect();
            match cols {
                None => prop_assert_eq!(left.len(), 60),
                Some(mut cols) => {
                    // What the columns hold, and the rest after them.
                    prop_assert_eq!(cols.rows() + left.len(), 60);
                    prop_assert_eq!(left.first().map_or(60, |r| r.id), cols.rows() as u64);
                    for r in &left {
                        cols.push_row(r).unwrap();
                    }
                    prop_assert_eq!(forms(cols), forms(Columns::of(&every).unwrap()));
                }
            }
        }
    }

    #[test]
    fn the_rows_above_make_columns_of_every_kind() {
        let names = names();
        let every: Vec<FlowRow<String>> = (0..10).map(|id| named(row(id), &names)).collect();
        let (text, blobs) = forms(Columns::of(&every).unwrap());
        // A page or none: text. An end or none: floats, NaN for none. Names: codes.
        assert!(text.contains(r#""page":[null,0,1,1,2,null,3,3,4,4]"#), "{text}");
        assert!(text.contains(r#""app":{"bin":1,"dtype":"<u4","levels":["a","b,c","d"]}"#), "{text}");
        assert!(text.contains(r#""end_s":{"bin":9,"dtype":"<f8"}"#), "{text}");
        assert_eq!(f64::from_le_bytes(blobs[9][8..16].try_into().unwrap()).to_bits(), f64::NAN.to_bits(), "flow 1's end");
        assert_eq!(blobs.len(), text.matches(r#""bin":"#).count());
    }

    #[test]
    fn a_flow_retired_twice_is_an_error_of_the_helper() {
        let mut retired = Retired { helper_rows: 2, batch_rows: 1, ..Retired::default() };
        retired.into_columns(names());
        for id in [0, 1, 1] {
            retired.push(row(id), |_| unreachable!("columns were asked for"));
        }
        assert_eq!(retired.finish().map(|_| ()).unwrap_err().0, "flow 1 retired twice");
        let mut retired = Retired { helper_rows: 2, batch_rows: 1, ..Retired::default() };
        retired.into_columns(names());
        for id in [3, 0, 3] {
            retired.push(row(id), |_| unreachable!("columns were asked for"));
        }
        assert_eq!(retired.finish().map(|_| ()).unwrap_err().0, "flow 3 retired twice");
    }
}
