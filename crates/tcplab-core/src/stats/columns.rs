//! Result tables as JSON columns: `{"id": [0, 1, ...], "src": ["s0", ...]}`
//! instead of one object per row. A table of 400,000 rows then parses on
//! the Python side as a few long lists rather than 400,000 dictionaries, and
//! becomes a DataFrame without a per-row step.
//!
//! Each field value is written by `serde_json` itself, so a column holds
//! exactly the text the row form would (same numbers, same nulls).
//!
//! Beside the text, a column of numbers can go out as the bytes of its
//! values, and a column of strings drawn from a few distinct values (a packet
//! log's link, event, app and kind) as a code per row and the list of values,
//! booleans likewise, a byte each: the Python side then makes no object per row.

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use crate::engine::fxhash::FastMap;
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

/// One column's values: while every value is an integer (that fits an i64)
/// or every one a finite float or null, as numbers (each the 8 bytes of its
/// little-endian form, which a blob holds as they are; a null as NaN, which
/// the row form also writes as null); while every one is a string of at
/// most [`MAX_LEVELS`] distinct ones, as codes; while every one is a
/// boolean, as bytes; while every one is null, as their count; otherwise as
/// JSON text.
enum Data {
    Ints(Vec<u8>),
    Floats(Vec<u8>),
    /// Nulls only, so far (the column's `len` of them).
    Nulls,
    /// Each value's index in the column's [`Levels`], 4 little-endian bytes.
    Codes(Vec<u8>),
    /// Booleans, a byte each (0 or 1).
    Bools(Vec<u8>),
    /// The values' JSON texts, joined by commas.
    Text(Vec<u8>),
}

/// The most distinct strings a column keeps as codes: past them (names of
/// hosts or applications in a large scenario) a code saves little.
pub const MAX_LEVELS: usize = 4096;

/// The distinct strings of a column of codes, in order of first appearance.
#[derive(Default)]
struct Levels {
    names: Vec<String>,
    index: FastMap<String, u32>,
    /// The last code given: a log's rows often repeat their neighbour's value.
    last: u32,
}

impl Levels {
    /// The code of `s`, a new one while there are fewer than [`MAX_LEVELS`];
    /// `None` beyond.
    fn code(&mut self, s: &str) -> Option<u32> {
        if self.names.get(self.last as usize).is_some_and(|n| n == s) {
            return Some(self.last);
        }
        let code = match self.index.get(s) {
            Some(&c) => c,
            None if self.names.len() < MAX_LEVELS => {
                let c = self.names.len() as u32;
                self.names.push(s.to_owned());
                self.index.insert(s.to_owned(), c);
                c
            }
            None => return None,
        };
        self.last = code;
        Some(code)
    }
}

struct Column {
    name: String,
    /// The address of the `&'static str` key last found to be `name`: a
    /// struct's rows give the same static keys, so a column is then
    /// found without comparing its name.
    key_at: usize,
    data: Data,
    len: usize,
    levels: Levels,
}

impl Column {
    fn push<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), Error> {
        // Strings are looked up only while the column may still be codes.
        let levels = (self.len == 0 || matches!(self.data, Data::Codes(_))).then_some(&mut self.levels);
        let cell = value.serialize(Probe { levels }).unwrap_or(Cell::Other);
        match (&mut self.data, cell) {
            (Data::Ints(v), Cell::Int(x)) => v.extend_from_slice(&x.to_le_bytes()),
            (Data::Floats(v), Cell::Float(x)) => v.extend_from_slice(&x.to_le_bytes()),
            (Data::Floats(v), Cell::Null) => v.extend_from_slice(&f64::NAN.to_le_bytes()),
            (Data::Nulls, Cell::Null) => {}
            (data @ Data::Nulls, Cell::Float(x)) if self.len > 0 => {
                let mut v = f64::NAN.to_le_bytes().repeat(self.len);
                v.extend_from_slice(&x.to_le_bytes());
                *data = Data::Floats(v);
            }
            (Data::Codes(v), Cell::Level(c)) => v.extend_from_slice(&c.to_le_bytes()),
            (Data::Bools(v), Cell::Bool(b)) => v.push(u8::from(b)),
            (data, cell) => {
                if self.len == 0 {
                    *data = match cell {
                        Cell::Int(x) => Data::Ints(x.to_le_bytes().to_vec()),
                        Cell::Float(x) => Data::Floats(x.to_le_bytes().to_vec()),
                        Cell::Level(c) => Data::Codes(c.to_le_bytes().to_vec()),
                        Cell::Bool(b) => Data::Bools(vec![u8::from(b)]),
                        Cell::Null => Data::Nulls,
                        Cell::Other => Data::Text(Vec::new()),
                    };
                }
                if matches!(cell, Cell::Other) || self.len > 0 {
                    let buf = self.make_text();
                    if !buf.is_empty() {
                        buf.push(b',');
                    }
                    serde_json::to_writer(&mut *buf, value).map_err(|e| Error(e.to_string()))?;
                }
            }
        }
        self.len += 1;
        Ok(())
    }

    /// Append `other`, the same column of the rows that follow: the column
    /// [`Column::push`] makes of them one after another.
    fn append(&mut self, other: Column) {
        let Column { data, len, levels, .. } = other;
        if len == 0 {
            return;
        }
        if self.len == 0 {
            (self.data, self.len, self.levels) = (data, len, levels);
            return;
        }
        let data = match (&mut self.data, data) {
            (Data::Ints(a), Data::Ints(b)) | (Data::Floats(a), Data::Floats(b)) | (Data::Bools(a), Data::Bools(b)) => {
                a.extend_from_slice(&b);
                None
            }
            (Data::Nulls, Data::Nulls) => None,
            (Data::Floats(a), Data::Nulls) => {
                a.extend_from_slice(&f64::NAN.to_le_bytes().repeat(len));
                None
            }
            (data @ Data::Nulls, Data::Floats(b)) => {
                let mut v = f64::NAN.to_le_bytes().repeat(self.len);
                v.extend_from_slice(&b);
                *data = Data::Floats(v);
                None
            }
            // The other's strings take codes after these, in the order they
            // first came: the order one pass would have given them.
            (Data::Codes(a), Data::Codes(b)) => match levels.names.iter().map(|s| self.levels.code(s)).collect::<Option<Vec<u32>>>() {
                Some(to) => {
                    a.reserve(b.len());
                    for c in b.chunks_exact(4) {
                        a.extend_from_slice(&to[u32::from_le_bytes(c.try_into().expect("4 bytes")) as usize].to_le_bytes());
                    }
                    None
                }
                None => Some(Data::Codes(b)),
            },
            (_, data) => Some(data),
        };
        if let Some(data) = data {
            // Values of two kinds, or more strings than codes: text, as one
            // pass turns a column into text at its first value of another kind.
            let rest = Column { name: String::new(), key_at: 0, data, len, levels };
            let buf = self.make_text();
            buf.push(b',');
            rest.write_values(buf);
        }
        self.len += len;
    }

    /// Room for `more` values like the ones so far (text: as long as the first).
    fn reserve(&mut self, more: usize) {
        match &mut self.data {
            Data::Ints(v) | Data::Floats(v) => v.reserve_exact(8 * more),
            Data::Codes(v) => v.reserve_exact(4 * more),
            Data::Bools(v) => v.reserve_exact(more),
            Data::Nulls => {}
            Data::Text(buf) => buf.reserve(more * (buf.len() + 1)),
        }
    }

    /// Turn the column into text (if it is not already) and return its buffer.
    fn make_text(&mut self) -> &mut Vec<u8> {
        if !matches!(self.data, Data::Text(_)) {
            let mut buf = Vec::new();
            self.write_values(&mut buf);
            self.data = Data::Text(buf);
        }
        match &mut self.data {
            Data::Text(buf) => buf,
            _ => unreachable!("just made text"),
        }
    }

    /// The values as JSON text, joined by commas (as the row form prints them).
    fn write_values(&self, out: &mut Vec<u8>) {
        fn join<T: Serialize>(out: &mut Vec<u8>, v: &[u8], from_le: impl Fn([u8; 8]) -> T) {
            for (i, x) in v.chunks_exact(8).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let x = from_le(x.try_into().expect("8 bytes"));
                serde_json::to_writer(&mut *out, &x).expect("a number serializes");
            }
        }
        match &self.data {
            Data::Ints(v) => join(out, v, i64::from_le_bytes),
            Data::Floats(v) => join(out, v, f64::from_le_bytes), // NaN as null, as serde_json writes it
            Data::Nulls => out.extend_from_slice(&b",null".repeat(self.len)[1.min(self.len)..]),
            Data::Bools(v) => {
                for (i, &b) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(if b == 1 { b"true" } else { b"false" });
                }
            }
            Data::Codes(v) => {
                for (i, c) in v.chunks_exact(4).enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    let name = &self.levels.names[u32::from_le_bytes(c.try_into().expect("4 bytes")) as usize];
                    serde_json::to_writer(&mut *out, name).expect("a string serializes");
                }
            }
            Data::Text(buf) => out.extend_from_slice(buf),
        }
    }
}

/// The columns of one table, in the order of the first row's fields.
#[derive(Default)]
pub struct Columns {
    cols: Vec<Column>,
    /// Where the next field is expected: rows repeat one field order.
    cursor: usize,
    rows: usize,
}

impl Columns {
    /// The columns of `rows` (each a struct, or a struct with flattened fields).
    pub fn of<T: Serialize>(rows: &[T]) -> Result<Columns, Error> {
        Columns::with_room(rows, rows.len())
    }

    /// [`Columns::of`], with room made for `room` rows in all.
    fn with_room<T: Serialize>(rows: &[T], room: usize) -> Result<Columns, Error> {
        let mut c = Columns::default();
        for r in rows {
            c.push_row(r)?;
            if c.rows == 1 {
                // Room for every row at once: growing 400,000-row columns by
                // doubling copies them and faults in memory twice over.
                for col in &mut c.cols {
                    col.reserve(room.max(rows.len()) - 1);
                }
            }
        }
        Ok(c)
    }

    /// Add `row` after the rows so far: `Columns::of` of them all, row by row.
    pub fn push_row<T: Serialize + ?Sized>(&mut self, row: &T) -> Result<(), Error> {
        self.cursor = 0;
        row.serialize(RowSer { cols: self })?;
        self.rows += 1;
        match self.cols.iter().find(|col| col.len != self.rows) {
            Some(col) => Err(Error(format!("row {} lacks field '{}' or repeats it", self.rows - 1, col.name))),
            None => Ok(()),
        }
    }

    /// How many rows the columns hold.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// [`Columns::push`] for a struct's field, whose key lives for the whole
    /// program: the same address and length are the same key.
    fn push_field<V: Serialize + ?Sized>(&mut self, key: &'static str, value: &V) -> Result<(), Error> {
        let at = key.as_ptr() as usize;
        if let Some(col) = self.cols.get_mut(self.cursor).filter(|c| c.key_at == at && c.name.len() == key.len()) {
            col.push(value)?;
            self.cursor += 1;
            return Ok(());
        }
        self.push(key, value)?;
        self.cols[self.cursor - 1].key_at = at;
        Ok(())
    }

    /// [`Columns::of`], built in two halves side by side when `parallel`
    /// (and there are two rows or more): the same columns.
    pub fn of_halves<T: Serialize + Sync>(rows: &[T], parallel: bool) -> Result<Columns, Error> {
        if !parallel || rows.len() < 2 {
            return Columns::of(rows);
        }
        Columns::of_parts(rows, rows.len() / 2, true)
    }

    /// [`Columns::of`], built as the rows before `at` and those after, the
    /// second part on a helper thread when `parallel`.
    fn of_parts<T: Serialize + Sync>(rows: &[T], at: usize, parallel: bool) -> Result<Columns, Error> {
        let (a, b) = rows.split_at(at);
        // The first part makes room for the second's rows too.
        if let (Ok(mut a), Ok(b)) = super::results::both(|| Columns::with_room(a, rows.len()), || Columns::of(b), parallel) {
            if a.append(b) {
                return Ok(a);
            }
        }
        // Rows of differing fields: the error one pass gives.
        Columns::of(rows)
    }

    /// Append `other`, the columns of the rows that follow: whether they have
    /// the same fields in the same order (if not, `self` is left as it was).
    fn append(&mut self, other: Columns) -> bool {
        if self.cols.len() != other.cols.len() || self.cols.iter().zip(&other.cols).any(|(a, b)| a.name != b.name) {
            return false;
        }
        for (a, b) in self.cols.iter_mut().zip(other.cols) {
            a.append(b);
        }
        self.rows += other.rows;
        true
    }

    fn push<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) -> Result<(), Error> {
        let k = if self.cols.get(self.cursor).is_some_and(|c| c.name == key) {
            self.cursor
        } else if let Some(k) = self.cols.iter().position(|c| c.name == key) {
            k
        } else if self.rows == 0 {
            self.cols.push(Column { name: key.to_owned(), key_at: 0, data: Data::Text(Vec::new()), len: 0, levels: Levels::default() });
            self.cols.len() - 1
        } else {
            return Err(Error(format!("field '{key}' is missing from the first row")));
        };
        self.cols[k].push(value)?;
        self.cursor = k + 1;
        Ok(())
    }

    /// Append the table as one JSON object of arrays (`{}` without rows).
    /// With `blobs`, a column of numbers is written instead as
    /// `{"bin": k, "dtype": "<i8"}` (or `"<f8"`), its values the
    /// little-endian bytes of `blobs[k]` (moved there, not copied), and a
    /// column of strings with at least two rows a value as
    /// `{"bin": k, "dtype": "<u4", "levels": [...]}`, row i's value being
    /// `levels[code i]`; a column of booleans likewise, as
    /// `{"bin": k, "dtype": "|u1", "levels": [false, true]}`.
    pub fn write_json(self, out: &mut Vec<u8>, mut blobs: Option<&mut Vec<Vec<u8>>>) {
        out.push(b'{');
        for (i, col) in self.cols.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, &col.name).expect("a string serializes");
            out.push(b':');
            let blob = |list: &mut Vec<Vec<u8>>, b: Vec<u8>, dtype: &str| {
                let at = format!("{{\"bin\":{},\"dtype\":\"{dtype}\"}}", list.len());
                list.push(b);
                at
            };
            match (col.data, blobs.as_deref_mut()) {
                (Data::Ints(b), Some(list)) => out.extend_from_slice(blob(list, b, "<i8").as_bytes()),
                (Data::Floats(b), Some(list)) => out.extend_from_slice(blob(list, b, "<f8").as_bytes()),
                // Codes save something where values repeat: at least two rows a value.
                // Booleans as codes into the levels [false, true].
                (Data::Bools(b), Some(list)) => {
                    let at = blob(list, b, "|u1");
                    out.extend_from_slice(&at.as_bytes()[..at.len() - 1]);
                    out.extend_from_slice(b",\"levels\":[false,true]}");
                }
                (Data::Codes(b), Some(list)) if 2 * col.levels.names.len() <= col.len => {
                    let at = blob(list, b, "<u4");
                    out.extend_from_slice(&at.as_bytes()[..at.len() - 1]);
                    out.extend_from_slice(b",\"levels\":");
                    serde_json::to_writer(&mut *out, &col.levels.names).expect("strings serialize");
                    out.push(b'}');
                }
                (data, _) => {
                    out.push(b'[');
                    Column { data, ..col }.write_values(out);
                    out.push(b']');
                }
            }
        }
        out.push(b'}');
    }
}

/// What a value is, as far as a column cares.
#[derive(Clone, Copy)]
enum Cell {
    Int(i64),
    Float(f64),
    /// A string, by its code in the column's levels.
    Level(u32),
    Bool(bool),
    /// `None`, or a float that is not finite (serde_json writes both as null).
    Null,
    Other,
}

/// Finds whether a value is a number, or (given the column's levels) a
/// string with a code: anything else is `Other` (or an error for compound
/// values, taken as `Other` too).
struct Probe<'a> {
    levels: Option<&'a mut Levels>,
}

macro_rules! other {
    ($($name:ident($($t:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $t),*) -> Result<Cell, Error> { Ok(Cell::Other) })*
    };
}

/// Integers that always fit an i64.
macro_rules! int {
    ($($name:ident($t:ty)),* $(,)?) => {
        $(fn $name(self, v: $t) -> Result<Cell, Error> { Ok(Cell::Int(v.into())) })*
    };
}

impl Serializer for Probe<'_> {
    type Ok = Cell;
    type Error = Error;
    type SerializeSeq = Impossible<Cell, Error>;
    type SerializeTuple = Impossible<Cell, Error>;
    type SerializeTupleStruct = Impossible<Cell, Error>;
    type SerializeTupleVariant = Impossible<Cell, Error>;
    type SerializeMap = Impossible<Cell, Error>;
    type SerializeStruct = Impossible<Cell, Error>;
    type SerializeStructVariant = Impossible<Cell, Error>;

    int!(serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32));
    fn serialize_u64(self, v: u64) -> Result<Cell, Error> {
        Ok(i64::try_from(v).map_or(Cell::Other, Cell::Int))
    }
    fn serialize_f64(self, v: f64) -> Result<Cell, Error> {
        // serde_json writes a non-finite float as null.
        Ok(if v.is_finite() { Cell::Float(v) } else { Cell::Null })
    }
    fn serialize_none(self) -> Result<Cell, Error> {
        Ok(Cell::Null)
    }
    // serde_json prints an f32 with f32's own shortest digits: keep it as text.
    other!(
        serialize_f32(f32), serialize_char(char), serialize_bytes(&[u8]),
        serialize_unit(), serialize_unit_struct(&'static str), serialize_unit_variant(&'static str, u32, &'static str),
    );
    fn serialize_bool(self, v: bool) -> Result<Cell, Error> {
        Ok(Cell::Bool(v))
    }
    fn serialize_str(self, v: &str) -> Result<Cell, Error> {
        Ok(self.levels.and_then(|l| l.code(v)).map_or(Cell::Other, Cell::Level))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Cell, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<Cell, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<Cell, Error> {
        Ok(Cell::Other)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(Error("compound".into()))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(Error("compound".into()))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(Error("compound".into()))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Error> {
        Err(Error("compound".into()))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(Error("compound".into()))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(Error("compound".into()))
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Error> {
        Err(Error("compound".into()))
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
        self.cols.push_field(key, value)
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

    fn json(c: Columns) -> String {
        let mut out = Vec::new();
        c.write_json(&mut out, None);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn columns_hold_the_text_rows_would() {
        let rows = [
            Row { id: 1, name: "x", inner: Inner { a: 7, b: Some(0.1) }, ok: true },
            Row { id: 2, name: "y\"z", inner: Inner { a: 8, b: None }, ok: false },
        ];
        let text = json(Columns::of(&rows).unwrap());
        assert_eq!(text, r#"{"id":[1,2],"name":["x","y\"z"],"a":[7,8],"b":[0.1,null],"ok":[true,false]}"#);
        // The same values as serde_json's row form, column by column.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        for (i, r) in rows.iter().enumerate() {
            let row = serde_json::to_value(r).unwrap();
            for (k, x) in row.as_object().unwrap() {
                assert_eq!(&v[k][i], x, "{k}");
            }
        }
    }

    #[derive(Serialize)]
    struct Mixed {
        n: u64,
        x: f64,
        m: Option<u64>,
    }

    #[test]
    fn numbers_go_to_blobs_and_a_column_that_stops_being_numbers_turns_to_text() {
        let rows = [Mixed { n: 1, x: 0.5, m: Some(3) }, Mixed { n: u64::MAX, x: f64::NAN, m: None }, Mixed { n: 2, x: 2.0, m: Some(4) }];
        let c = Columns::of(&rows[..1]).unwrap();
        let mut blobs = Vec::new();
        let mut out = Vec::new();
        c.write_json(&mut out, Some(&mut blobs));
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"n":{"bin":0,"dtype":"<i8"},"x":{"bin":1,"dtype":"<f8"},"m":{"bin":2,"dtype":"<i8"}}"#);
        assert_eq!(blobs, vec![1i64.to_le_bytes().to_vec(), 0.5f64.to_le_bytes().to_vec(), 3i64.to_le_bytes().to_vec()]);
        // Without blobs, the same numbers as text.
        assert_eq!(json(Columns::of(&rows[..1]).unwrap()), r#"{"n":[1],"x":[0.5],"m":[3]}"#);
        // u64 beyond i64 and None make text of the integers that came before;
        // NaN (written null) stays in the floats' blob as NaN.
        let c = Columns::of(&rows).unwrap();
        let mut blobs = Vec::new();
        let mut out = Vec::new();
        c.write_json(&mut out, Some(&mut blobs));
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"n":[1,18446744073709551615,2],"x":{"bin":0,"dtype":"<f8"},"m":[3,null,4]}"#);
        assert_eq!(blobs, vec![[0.5f64, f64::NAN, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()]);
        assert_eq!(json(Columns::of(&rows).unwrap()), r#"{"n":[1,18446744073709551615,2],"x":[0.5,null,2.0],"m":[3,null,4]}"#);
    }

    #[derive(Serialize)]
    struct Maybe {
        x: Option<f64>,
        y: Option<f64>,
        z: Option<i64>,
    }

    #[test]
    fn a_column_of_floats_and_nulls_goes_to_a_blob_with_nan_for_null() {
        let (a, b, c) = (None, Some(1.5), Some(-2.0));
        let rows = [Maybe { x: a, y: None, z: None }, Maybe { x: b, y: None, z: Some(3) }, Maybe { x: a, y: None, z: None }, Maybe { x: c, y: None, z: Some(4) }];
        let (text, blobs) = blob_json(Columns::of(&rows).unwrap());
        // Nulls first, then floats: NaN for each null before. Only nulls, or
        // nulls then integers: text, as before.
        assert_eq!(text, r#"{"x":{"bin":0,"dtype":"<f8"},"y":[null,null,null,null],"z":[null,3,null,4]}"#);
        let nan = f64::NAN;
        assert_eq!(blobs, vec![[nan, 1.5, nan, -2.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()]);
        // Without blobs, and read back from the blob, the row form's values.
        assert_eq!(json(Columns::of(&rows).unwrap()), r#"{"x":[null,1.5,null,-2.0],"y":[null,null,null,null],"z":[null,3,null,4]}"#);
        let back: Vec<Option<f64>> = blobs[0].chunks_exact(8).map(|b| Some(f64::from_le_bytes(b.try_into().unwrap())).filter(|x| !x.is_nan())).collect();
        assert_eq!(back, rows.iter().map(|r| r.x).collect::<Vec<_>>());
        assert_eq!(json(Columns::of(&rows[..0]).unwrap()), "{}");
        assert_eq!(json(Columns::of(&rows[..1]).unwrap()), r#"{"x":[null],"y":[null],"z":[null]}"#);
    }

    #[derive(Serialize)]
    struct Logged {
        link: String,
        app: Option<&'static str>,
        n: u32,
    }

    fn blob_json(c: Columns) -> (String, Vec<Vec<u8>>) {
        let mut blobs = Vec::new();
        let mut out = Vec::new();
        c.write_json(&mut out, Some(&mut blobs));
        (String::from_utf8(out).unwrap(), blobs)
    }

    fn codes(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|c| c.to_le_bytes()).collect()
    }

    #[test]
    fn strings_of_few_values_go_to_blobs_as_codes_and_their_levels() {
        let row = |link: &str, app| Logged { link: link.into(), app, n: 1 };
        let rows = [row("r0->r1", Some("a")), row("r1->r0", Some("b")), row("r0->r1", Some("a")), row("r0->r1", Some("b"))];
        let (text, blobs) = blob_json(Columns::of(&rows).unwrap());
        assert_eq!(
            text,
            r#"{"link":{"bin":0,"dtype":"<u4","levels":["r0->r1","r1->r0"]},"app":{"bin":1,"dtype":"<u4","levels":["a","b"]},"n":{"bin":2,"dtype":"<i8"}}"#
        );
        assert_eq!(blobs[0], codes(&[0, 1, 0, 0]));
        assert_eq!(blobs[1], codes(&[0, 1, 0, 1]));
        // Without blobs, the strings themselves, as the row form writes them.
        assert_eq!(json(Columns::of(&rows).unwrap()), r#"{"link":["r0->r1","r1->r0","r0->r1","r0->r1"],"app":["a","b","a","b"],"n":[1,1,1,1]}"#);
        // Fewer than two rows a value: the strings, where codes would save nothing.
        let rows = [row("x", Some("a")), row("x", Some("b")), row("x", Some("c"))];
        let (text, _) = blob_json(Columns::of(&rows).unwrap());
        assert_eq!(text, r#"{"link":{"bin":0,"dtype":"<u4","levels":["x"]},"app":["a","b","c"],"n":{"bin":1,"dtype":"<i8"}}"#);
        // A null among the strings makes the column text, the strings before it included.
        let rows = [row("x", Some("a")), row("y", None), row("x", Some("a")), row("y", Some("a"))];
        let (text, blobs) = blob_json(Columns::of(&rows).unwrap());
        assert_eq!(text, r#"{"link":{"bin":0,"dtype":"<u4","levels":["x","y"]},"app":["a",null,"a","a"],"n":{"bin":1,"dtype":"<i8"}}"#);
        assert_eq!(blobs.len(), 2);
    }

    #[derive(Serialize)]
    struct Flags {
        ok: bool,
        maybe: Option<bool>,
    }

    #[test]
    fn booleans_go_to_blobs_as_a_byte_each_unless_a_null_comes() {
        let rows = [Flags { ok: true, maybe: Some(true) }, Flags { ok: false, maybe: None }, Flags { ok: true, maybe: Some(false) }];
        let (text, blobs) = blob_json(Columns::of(&rows).unwrap());
        assert_eq!(text, r#"{"ok":{"bin":0,"dtype":"|u1","levels":[false,true]},"maybe":[true,null,false]}"#);
        assert_eq!(blobs, vec![vec![1, 0, 1]]);
        assert_eq!(json(Columns::of(&rows).unwrap()), r#"{"ok":[true,false,true],"maybe":[true,null,false]}"#);
    }

    #[test]
    fn a_column_of_more_distinct_strings_than_max_levels_is_text() {
        // Each value twice: l0, l1, ..., l0, l1, ...
        let rows = |n: usize| -> Vec<Logged> { (0..2 * n).map(|i| Logged { link: format!("l{}", i % n), app: Some("a"), n: 0 }).collect() };
        let (text, blobs) = blob_json(Columns::of(&rows(MAX_LEVELS)).unwrap());
        assert!(text.starts_with(r#"{"link":{"bin":0,"dtype":"<u4","levels":["l0","l1","#), "{}", &text[..60]);
        assert_eq!(blobs[0].len(), 4 * 2 * MAX_LEVELS);
        let (text, blobs) = blob_json(Columns::of(&rows(MAX_LEVELS + 1)).unwrap());
        let once: Vec<String> = (0..=MAX_LEVELS).map(|i| format!("\"l{i}\"")).collect();
        let twice = [once.clone(), once].concat();
        assert!(text.starts_with(&format!(r#"{{"link":[{}],"app":{{"bin":0,"dtype":"<u4","levels":["a"]}}"#, twice.join(","))));
        assert_eq!(blobs[0], codes(&vec![0; 2 * (MAX_LEVELS + 1)]));
    }

    /// A cell of any kind a column tells apart.
    #[derive(Clone, Debug, Serialize)]
    #[serde(untagged)]
    enum Any {
        Int(i64),
        Big(u64),
        Float(f64),
        Null(Option<u8>),
        Str(String),
        Bool(bool),
    }

    #[derive(Clone, Debug, Serialize)]
    struct Three {
        a: Any,
        b: Any,
        c: Any,
    }

    /// The JSON text and blobs of `c`, and its JSON text without blobs.
    fn both_forms(c: impl Fn() -> Columns) -> (String, Vec<Vec<u8>>, String) {
        let (text, blobs) = blob_json(c());
        (text, blobs, json(c()))
    }

    fn any_cell() -> impl proptest::strategy::Strategy<Value = Any> {
        use proptest::prelude::*;
        prop_oneof![
            (-3i64..3).prop_map(Any::Int),
            Just(Any::Big(u64::MAX)),
            prop_oneof![Just(0.5), Just(-2.0), Just(f64::NAN), Just(f64::INFINITY)].prop_map(Any::Float),
            Just(Any::Null(None)),
            (0u8..4).prop_map(|i| Any::Str(format!("s{i}"))),
            any::<bool>().prop_map(Any::Bool),
        ]
    }

    /// A column's cells: mostly of one kind, at times of another.
    fn cells(n: usize) -> impl proptest::strategy::Strategy<Value = Vec<Any>> {
        use proptest::prelude::*;
        (any_cell(), proptest::collection::vec((any_cell(), 0u8..10), n)).prop_map(|(first, rest)| {
            rest.into_iter()
                .map(|(cell, roll)| match (&first, roll) {
                    (_, 0) => cell,
                    (Any::Int(_), _) => Any::Int(i64::from(roll)),
                    (Any::Float(_), r) if r < 5 => Any::Null(None),
                    (Any::Float(_), r) => Any::Float(f64::from(r) / 4.0),
                    (Any::Str(_), r) => Any::Str(format!("s{}", r % 3)),
                    (Any::Bool(_), r) => Any::Bool(r % 2 == 0),
                    (other, _) => other.clone(),
                })
                .collect()
        })
    }

    proptest::proptest! {
        #[test]
        fn columns_built_in_two_parts_are_the_columns_of_one_pass(
            (a, b, c) in proptest::strategy::Strategy::prop_flat_map(0usize..24, |n| (cells(n), cells(n), cells(n)))
        ) {
            let rows: Vec<Three> = a.into_iter().zip(b).zip(c).map(|((a, b), c)| Three { a, b, c }).collect();
            let whole = both_forms(|| Columns::of(&rows).unwrap());
            for at in 0..=rows.len() {
                proptest::prop_assert_eq!(&both_forms(|| Columns::of_parts(&rows, at, false).unwrap()), &whole, "split at {}", at);
            }
            proptest::prop_assert_eq!(&both_forms(|| Columns::of_halves(&rows, true).unwrap()), &whole);
        }
    }

    #[test]
    fn strings_in_two_parts_take_codes_in_order_of_first_appearance_until_there_are_too_many() {
        let row = |link: String| Logged { link, app: Some("a"), n: 0 };
        // Half the first part's names in the second, in another order, and
        // each name at least twice (codes, not text).
        let names = |range: std::ops::Range<usize>| range.map(|i| row(format!("l{i}")));
        let rows: Vec<Logged> = names(0..2000).chain(names(1000..3000).rev()).chain(names(0..3000)).collect();
        let (text, blobs) = blob_json(Columns::of_parts(&rows, 2000, true).unwrap());
        assert_eq!((text.clone(), blobs.clone()), blob_json(Columns::of(&rows).unwrap()));
        assert!(text.starts_with(r#"{"link":{"bin":0,"dtype":"<u4","levels":["l0","l1","#));
        assert!(text.contains(r#""l1999","l2999","l2998""#), "the second part's new names after the first's, as they come");
        // Each part within MAX_LEVELS, both together beyond: text, as one pass gives.
        let rows: Vec<Logged> = names(0..3000).chain(names(3000..6000)).chain(names(0..6000)).collect();
        let (text, blobs) = blob_json(Columns::of_parts(&rows, 6000, true).unwrap());
        assert_eq!((text.clone(), blobs), blob_json(Columns::of(&rows).unwrap()));
        assert!(text.starts_with(r#"{"link":["l0","l1","#));
        // Rows of differing fields in the two parts: one pass's error.
        #[derive(Serialize)]
        struct Other {
            link: String,
        }
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Either {
            L(Logged),
            O(Other),
        }
        let rows = [Either::L(row("x".into())), Either::O(Other { link: "y".into() })];
        let err = |c: Result<Columns, Error>| c.err().map(|e| e.0);
        assert_eq!(err(Columns::of_parts(&rows, 1, true)), err(Columns::of(&rows)));
        assert!(err(Columns::of(&rows)).is_some());
    }

    #[test]
    fn no_rows_is_an_empty_table_and_a_non_struct_is_refused() {
        assert_eq!(json(Columns::of::<Row>(&[]).unwrap()), "{}");
        assert!(Columns::of(&[1u32, 2]).is_err());
    }
}
