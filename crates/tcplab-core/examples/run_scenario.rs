//! Run a normalized scenario JSON file and print the engine counters:
//! `cargo run --release --example run_scenario -- scenario.json`.

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario SCENARIO.json");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    match tcplab_core::run_json(&text) {
        Ok(r) => {
            let t = std::time::Instant::now();
            let mut blobs = Vec::new();
            let text = tcplab_core::stats::to_json_columns(&r, Some(&mut blobs)).expect("serializable");
            eprintln!("columns: {:.3} s, {} bytes of text and {} of numbers", t.elapsed().as_secs_f64(), text.len(), blobs.iter().map(Vec::len).sum::<usize>());
            println!("{}", serde_json::to_string(&r.engine).expect("serializable"))
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
