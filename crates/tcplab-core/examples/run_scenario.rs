//! Run a normalized scenario JSON file and print the engine counters:
//! `cargo run --release --example run_scenario -- scenario.json`.

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario SCENARIO.json");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    match tcplab_core::run_json(&text) {
        Ok(r) => println!("{}", serde_json::to_string(&r.engine).expect("serializable")),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
