//! Scenario JSON into the core's builder: it never panics; it builds a
//! simulation or returns an `Error`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(sc) = tcplab_core::scenario::Scenario::from_json(text) {
            let _ = tcplab_core::Simulator::new(&sc);
        }
    }
});
