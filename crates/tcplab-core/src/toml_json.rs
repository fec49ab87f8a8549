//! A TOML document (a scenario or sweep file) as JSON text, for the Python
//! front: Python's own TOML parser (`tomllib`) is written in Python and
//! takes about 12 s on the file of a 100,000-flow scenario, while the JSON
//! text of the same document loads in a fraction of a second.
//!
//! Tables keep their keys in the document's order, as `tomllib` does. Only
//! what JSON carries exactly is converted: a document holding a date or
//! time, a float that is infinite or NaN, or an integer outside 64 bits, and
//! any document that is not valid TOML, gives `None`, and the caller parses
//! the text with `tomllib` itself, whose values and error messages remain
//! the reference.

use std::fmt::Write;
use toml::{Table, Value};

/// `text` as JSON text, or `None` (see the module's notes).
pub fn toml_to_json(text: &str) -> Option<String> {
    let table: Table = text.parse().ok()?;
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    write_table(&table, &mut out)?;
    Some(out)
}

fn write_table(t: &Table, out: &mut String) -> Option<()> {
    out.push('{');
    for (k, (key, v)) in t.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        write_str(key, out);
        out.push(':');
        write_value(v, out)?;
    }
    out.push('}');
    Some(())
}

fn write_value(v: &Value, out: &mut String) -> Option<()> {
    match v {
        Value::String(s) => write_str(s, out),
        Value::Integer(i) => write!(out, "{i}").ok()?,
        // Shortest text that reads back as the same double (serde_json's).
        Value::Float(f) => out.push_str(&serde_json::Number::from_f64(*f)?.to_string()),
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Datetime(_) => return None,
        Value::Array(a) => {
            out.push('[');
            for (k, x) in a.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_value(x, out)?;
            }
            out.push(']');
        }
        Value::Table(t) => write_table(t, out)?,
    }
    Some(())
}

fn write_str(s: &str, out: &mut String) {
    // serde_json escapes what JSON requires (quotes, backslashes, control characters).
    out.push_str(&serde_json::to_string(s).expect("a string always serializes"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_values_their_types() {
        let text = "z = 1\na = \"x\\\"y\\u00e9\"\n[sim]\nduration = \"1s\"\nf = -0.0\ng = 1.5e300\n[[apps]]\nb = true\nlist = [1, 2.5, \"s\", {q = 1}]\n[[apps]]\n";
        assert_eq!(
            toml_to_json(text).as_deref(),
            Some(r#"{"z":1,"a":"x\"yé","sim":{"duration":"1s","f":-0.0,"g":1.5e+300},"apps":[{"b":true,"list":[1,2.5,"s",{"q":1}]},{}]}"#)
        );
    }

    #[test]
    fn what_json_cannot_carry_and_invalid_toml_give_none() {
        for text in ["t = 1979-05-27T07:32:00Z", "x = inf", "x = nan", "x = -inf", "seed = 18446744073709551615", "a = = 1", "a = 1\na = 2"] {
            assert_eq!(toml_to_json(text), None, "{text}");
        }
        assert_eq!(toml_to_json("").as_deref(), Some("{}"));
        assert_eq!(toml_to_json("x = -9223372036854775808").as_deref(), Some(r#"{"x":-9223372036854775808}"#));
    }
}
