//! Run a normalized scenario JSON file and print the engine counters:
//! `cargo run --release --example run_scenario -- scenario.json`. With
//! `--columns` after the file, the results are made as `tcplab.run` has
//! them made (as columns with their blobs), and their size is printed too.

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run_scenario SCENARIO.json [--columns]");
    let columns = args.next().is_some_and(|a| a == "--columns");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let engine = if columns {
        tcplab_core::run_json_columns(&text, &[], || (), None, true).map(|(text, blobs)| {
            let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON results");
            let bytes: usize = blobs.iter().map(Vec::len).sum();
            format!("{} {{\"blobs\": {}, \"blob_bytes\": {bytes}}}", doc["engine"], blobs.len())
        })
    } else {
        tcplab_core::run_json(&text).map(|r| serde_json::to_string(&r.engine).expect("serializable"))
    };
    match engine {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
