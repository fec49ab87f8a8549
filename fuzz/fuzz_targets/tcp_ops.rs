//! Operation sequences on a sender and receiver pair (`tcp::ops`): data and
//! ACKs delivered, lost, duplicated, reordered or corrupted, timers firing;
//! TCP's invariants must hold after every step.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = tcplab_core::tcp::ops::run(data) {
        panic!("invariant broken: {e}");
    }
});
