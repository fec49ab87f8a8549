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
use toml::de::{DeTable, DeValue};

/// `text` as JSON text, or `None` (see the module's notes).
///
/// The JSON is written from the parser's own tree (`DeTable`, whose strings
/// borrow from `text` where they hold no escapes), not from a `toml::Table`
/// built from it by serde: that second tree of owned keys and values took
/// about a third of the time on the 100,000-flow file. Numbers are read as
/// `toml::Value` reads them: an integer in 64 bits, a float that is finite.
pub fn toml_to_json(text: &str) -> Option<String> {
    let table = DeTable::parse(text).ok()?;
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    write_table(table.get_ref(), &mut out)?;
    Some(out)
}

fn write_table(t: &DeTable<'_>, out: &mut String) -> Option<()> {
    out.push('{');
    for (k, (key, v)) in t.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        write_str(key.get_ref(), out);
        out.push(':');
        write_value(v.get_ref(), out)?;
    }
    out.push('}');
    Some(())
}

fn write_value(v: &DeValue<'_>, out: &mut String) -> Option<()> {
    match v {
        DeValue::String(s) => write_str(s, out),
        DeValue::Integer(i) => write!(out, "{}", i64::from_str_radix(i.as_str(), i.radix()).ok()?).ok()?,
        // Shortest text that reads back as the same double (serde_json's);
        // `nan`, `inf` and a decimal past the doubles' range give None.
        DeValue::Float(f) => out.push_str(&serde_json::Number::from_f64(f.as_str().parse().ok()?)?.to_string()),
        DeValue::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        DeValue::Datetime(_) => return None,
        DeValue::Array(a) => {
            out.push('[');
            for (k, x) in a.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_value(x.get_ref(), out)?;
            }
            out.push(']');
        }
        DeValue::Table(t) => write_table(t, out)?,
    }
    Some(())
}

fn write_str(s: &str, out: &mut String) {
    // What JSON requires escaping (quotes, backslashes, control characters),
    // as serde_json escapes it; plain text is copied as it is.
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(&serde_json::to_string(s).expect("a string always serializes"));
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
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
        for text in ["x = 1e400", "x = 0x8000000000000000", "[a]\n[a]", "a.b = 1\n[a]\nb = 2", "t = {x = 1, x = 2}"] {
            assert_eq!(toml_to_json(text), None, "{text}");
        }
    }

    #[test]
    fn numbers_in_every_notation_and_strings_with_escapes() {
        let text = "a = 1_000\nb = +7\nc = 0xff\nd = 0o17\ne = 0b101\nf = 6.02e+2_3\ng = 1_0.5\nh = -1E-2\n\
                    s = 'C:\\tmp'\nm = \"\"\"\nline\ttab\"\"\"\nu = \"\\u0001\"\nx.y.z = \"dotted\"";
        assert_eq!(
            toml_to_json(text).as_deref(),
            Some(r#"{"a":1000,"b":7,"c":255,"d":15,"e":5,"f":6.02e+23,"g":10.5,"h":-0.01,"s":"C:\\tmp","m":"line\ttab","u":"\u0001","x":{"y":{"z":"dotted"}}}"#)
        );
    }
}
