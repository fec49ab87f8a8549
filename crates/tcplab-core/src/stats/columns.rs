//! Result tables as JSON columns: `{"id": [0, 1, ...], "src": ["s0", ...]}`
//! instead of one object per row. A table of 400,000 rows then parses on
//! the Python side as a few long lists rather than 400,000 dictionaries, and
//! becomes a DataFrame without a per-row step.
//!
//! Each field value is written by `serde_json` itself, so a column holds
//! exactly the text the row form would (same numbers, same nulls).

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use std::fmt;

#[derive(Debug)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// The columns of one table, in the order of the first row's fields.
#[derive(Default)]
pub struct Columns {
    cols: Vec<(String, Vec<u8>)>,
    /// Where the next field is expected: rows repeat one field order.
    cursor: usize,
    rows: usize,
}

impl Columns {
    /// The columns of `rows` (each a struct, or a struct with flattened fields).
    pub fn of<T: Serialize>(rows: &[T]) -> Result<Columns, Error> {
        let mut c = Columns::default();
        for r in rows {
            c.cursor = 0;
            r.serialize(RowSer { cols: &mut c })?;
            c.rows += 1;
            if c.cols.iter().any(|(_, buf)| buf.is_empty()) {
                return Err(Error("a row lacks a field the first row has".into()));
            }
        }
        Ok(c)
    }

    fn push<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) -> Result<(), Error> {
        let k = if self.cols.get(self.cursor).is_some_and(|(name, _)| name == key) {
            self.cursor
        } else if let Some(k) = self.cols.iter().position(|(name, _)| name == key) {
            k
        } else if self.rows == 0 {
            self.cols.push((key.to_owned(), Vec::new()));
            self.cols.len() - 1
        } else {
            return Err(Error(format!("field '{key}' is missing from the first row")));
        };
        let buf = &mut self.cols[k].1;
        buf.push(if self.rows == 0 { b'[' } else { b',' });
        serde_json::to_writer(&mut *buf, value).map_err(|e| Error(e.to_string()))?;
        self.cursor = k + 1;
        Ok(())
    }

    /// Append the table as one JSON object of arrays (`{}` without rows).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (i, (name, buf)) in self.cols.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, name).expect("a string serializes");
            out.push(b':');
            out.extend_from_slice(buf);
            out.push(b']');
        }
        out.push(b'}');
    }
}

/// Serializes one row into the columns.
struct RowSer<'a> {
    cols: &'a mut Columns,
}

fn not_a_row<T>() -> Result<T, Error> {
    Err(Error("a table row must be a struct".into()))
}

macro_rules! reject {
    ($($name:ident($($t:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $t),*) -> Result<(), Error> { not_a_row() })*
    };
}

impl<'a> Serializer for RowSer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = RowMap<'a>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Error>;

    reject!(
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64),
        serialize_u8(u8), serialize_u16(u16), serialize_u32(u32), serialize_u64(u64), serialize_f32(f32),
        serialize_f64(f64), serialize_char(char), serialize_str(&str), serialize_bytes(&[u8]), serialize_none(),
        serialize_unit(), serialize_unit_struct(&'static str), serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        not_a_row()
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<(), Error> {
        not_a_row()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        not_a_row()
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        not_a_row()
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        not_a_row()
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Error> {
        not_a_row()
    }
    fn serialize_map(self, _: Option<usize>) -> Result<RowMap<'a>, Error> {
        Ok(RowMap { cols: self.cols, key: String::new() })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Error> {
        not_a_row()
    }
}

impl SerializeStruct for RowSer<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.cols.push(key, value)
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

/// A row serialized as a map: a struct with `#[serde(flatten)]` fields.
struct RowMap<'a> {
    cols: &'a mut Columns,
    key: String,
}

impl SerializeMap for RowMap<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = match serde_json::to_value(key).map_err(|e| Error(e.to_string()))? {
            serde_json::Value::String(s) => s,
            other => return Err(Error(format!("a column name must be a string, not {other}"))),
        };
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.cols.push(&self.key, value)
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Inner {
        a: u32,
        b: Option<f64>,
    }

    #[derive(Serialize)]
    struct Row {
        id: u64,
        name: &'static str,
        #[serde(flatten)]
        inner: Inner,
        ok: bool,
    }

    fn json(c: &Columns) -> String {
        let mut out = Vec::new();
        c.write_json(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn columns_hold_the_text_rows_would() {
        let rows = [
            Row { id: 1, name: "x", inner: Inner { a: 7, b: Some(0.1) }, ok: true },
            Row { id: 2, name: "y\"z", inner: Inner { a: 8, b: None }, ok: false },
        ];
        let c = Columns::of(&rows).unwrap();
        assert_eq!(json(&c), r#"{"id":[1,2],"name":["x","y\"z"],"a":[7,8],"b":[0.1,null],"ok":[true,false]}"#);
        // The same values as serde_json's row form, column by column.
        let v: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
        for (i, r) in rows.iter().enumerate() {
            let row = serde_json::to_value(r).unwrap();
            for (k, x) in row.as_object().unwrap() {
                assert_eq!(&v[k][i], x, "{k}");
            }
        }
    }

    #[test]
    fn no_rows_is_an_empty_table_and_a_non_struct_is_refused() {
        assert_eq!(json(&Columns::of::<Row>(&[]).unwrap()), "{}");
        assert!(Columns::of(&[1u32, 2]).is_err());
    }
}
