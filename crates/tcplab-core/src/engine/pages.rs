//! A large array moved into 2 MiB pages that a helper thread prepared
//! while set-up went on.
//!
//! With 100,000 flows the links fill 128 MB, and a packet's way reads four
//! of them at random: in 4 KiB pages nearly every such read also misses the
//! TLB, and in 2 MiB pages the loop runs 7-13% faster (DEVELOPERS.md,
//! "Rules of the hot path"; the connections, each read whole at once, gain
//! less than their pages cost to prepare). The kernel clears a huge page when it is first written, which
//! on a virtual machine costs several times what 4 KiB pages do; set-up
//! writing the links straight into huge pages would wait for it. So a
//! helper thread allocates the huge pages and has them mapped
//! (`MADV_POPULATE_WRITE`) while set-up builds the links in ordinary
//! memory, and set-up then moves the links over (a copy of some tens of
//! milliseconds) and frees the first array.
//!
//! Everything here is advice: where the kernel refuses it (another OS, an
//! older kernel, transparent huge pages turned off), the pages are
//! ordinary ones. Results never depend on it.

/// Below this many bytes an array keeps ordinary pages.
pub const MIN_BYTES: usize = 8 << 20;

/// An empty vector with room for `n` items, in huge pages mapped by a
/// helper thread: [`Prepared::adopt`] takes it when ready.
pub struct Prepared<T>(Option<std::thread::JoinHandle<Vec<T>>>);

impl<T: Send + 'static> Prepared<T> {
    /// Start preparing room for `n` items, unless they take fewer than
    /// [`MIN_BYTES`], the system has no such advice (not Linux), or no
    /// thread can be started.
    pub fn start(n: usize) -> Prepared<T> {
        if !cfg!(target_os = "linux") || n.saturating_mul(std::mem::size_of::<T>()) < MIN_BYTES {
            return Prepared(None);
        }
        let helper = std::thread::Builder::new().name("tcplab-pages".into()).spawn(move || {
            let mut v = Vec::with_capacity(n);
            let spare = v.spare_capacity_mut();
            map_huge(spare.as_mut_ptr() as usize, std::mem::size_of_val(spare));
            v
        });
        Prepared(helper.ok())
    }

    /// `items`, moved into the prepared room where there is one and it has
    /// space for them all (the room is waited for); else `items` as it is.
    pub fn adopt(self, mut items: Vec<T>) -> Vec<T> {
        match self.0.map(|h| h.join()) {
            Some(Ok(mut room)) if room.capacity() >= items.len() => {
                room.append(&mut items);
                room
            }
            _ => items,
        }
    }
}

/// Ask for `[start, start + bytes)` in huge pages and map them now.
#[cfg(target_os = "linux")]
fn map_huge(start: usize, bytes: usize) {
    use std::ffi::{c_int, c_void};
    const MADV_HUGEPAGE: c_int = 14;
    const MADV_POPULATE_WRITE: c_int = 23;
    extern "C" {
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }
    const PAGE: usize = 4096;
    let (lo, hi) = ((start + PAGE - 1) & !(PAGE - 1), (start + bytes) & !(PAGE - 1));
    if hi > lo {
        // SAFETY: the range lies in an allocation this thread owns, and
        // neither piece of advice changes a byte of it; a refusal leaves
        // it as it was.
        unsafe {
            madvise(lo as *mut c_void, hi - lo, MADV_HUGEPAGE);
            madvise(lo as *mut c_void, hi - lo, MADV_POPULATE_WRITE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn map_huge(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_array_starts_no_helper_and_stays_where_it_is() {
        let p = Prepared::<u64>::start(1000);
        assert!(p.0.is_none());
        let v = vec![7u64; 1000];
        let at = v.as_ptr();
        let v = p.adopt(v);
        assert_eq!(v.as_ptr(), at);
        assert_eq!(v, vec![7u64; 1000]);
    }

    #[test]
    fn a_large_array_moves_into_the_prepared_room_in_order() {
        let n = 3 * MIN_BYTES / 8;
        let p = Prepared::<u64>::start(n);
        let linux = cfg!(target_os = "linux");
        assert_eq!(p.0.is_some(), linux);
        let v: Vec<u64> = (0..n as u64).map(|i| i * 7).collect();
        let at = v.as_ptr();
        let v = p.adopt(v);
        assert_eq!(v.as_ptr() != at, linux, "it moved where there was a room");
        assert_eq!(v.capacity(), n);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 7));
    }

    /// The kilobytes of `/proc/self/smaps`'s `AnonHugePages` in the
    /// mapping that holds `at`, where Linux says.
    fn huge_kb_at(at: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ').filter(|(r, _)| r.contains('-') && !r.ends_with(':')) {
                let (lo, hi) = range.split_once('-')?;
                let (lo, hi) = (usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?);
                inside = (lo..hi).contains(&at);
            } else if let Some(kb) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
                return kb.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
        None
    }

    #[test]
    fn the_room_is_in_huge_pages_where_the_kernel_grants_them() {
        // Transparent huge pages off (or no such file: another OS, or a
        // kernel without them) and nothing is promised.
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if !(mode.contains("[always]") || mode.contains("[madvise]")) {
            return;
        }
        let n = 4 * MIN_BYTES / 8;
        let v = Prepared::<u64>::start(n).adopt((0..n as u64).collect());
        // The advice covers whole 4 KiB pages, so the vector's first
        // bytes (after the allocator's header) may lie in a mapping of
        // their own: look in the middle.
        let kb = huge_kb_at(v.as_ptr().wrapping_add(n / 2) as usize).expect("the vector's mapping is listed");
        // 32 MiB hold at least 15 whole 2 MiB pages wherever they start.
        assert!(kb >= 15 * 2048, "{kb} kB in huge pages");
    }

    #[test]
    fn a_room_too_small_for_the_items_is_not_used() {
        let n = 2 * MIN_BYTES / 8;
        let p = Prepared::<u64>::start(n);
        let v: Vec<u64> = (0..n as u64 + 1).collect();
        let at = v.as_ptr();
        let v = p.adopt(v);
        assert_eq!(v.as_ptr(), at);
        assert_eq!(v.len(), n + 1);
    }
}
