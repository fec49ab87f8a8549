//! PyO3 bindings of tcplab-core: the private module `tcplab._core`.
//!
//! Only glue lives here: the public API is the `tcplab` Python package. A
//! scenario the core refuses raises `CoreScenarioError(field, message)`; a
//! panic in the core is caught here and raises `CorePanic(message)`, never
//! an abort of the interpreter.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

create_exception!(_core, CoreScenarioError, PyException, "A scenario the core refused: args are (field or None, message).");
create_exception!(_core, CorePanic, PyException, "The core panicked (a bug in tcplab).");

/// Set this environment variable to make the next run panic on purpose, to
/// test that a panic reaches Python as an exception.
const PANIC_HOOK: &str = "TCPLAB_DEBUG_PANIC";

/// A flag that stops a run's loop once set (`set()`, from any thread): the
/// run then raises `CoreScenarioError` ("the run was cancelled").
#[pyclass(frozen, module = "tcplab._core")]
#[derive(Default)]
struct Cancel(Arc<AtomicBool>);

#[pymethods]
impl Cancel {
    #[new]
    fn new() -> Self {
        Self::default()
    }
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Run a normalized scenario (JSON text) and return the results as JSON text:
/// a list of rows per table, or with `columns`, a list per column.
///
/// The simulation runs with the interpreter lock released.
#[pyfunction]
#[pyo3(signature = (scenario, columns = false))]
fn run_json(py: Python<'_>, scenario: &str, columns: bool) -> PyResult<String> {
    let out = run(py, scenario, Vec::new(), None, None, if columns { Form::Columns { blobs: false } } else { Form::Rows })?;
    Ok(out.0)
}

/// The bytes of one result column, read in place through the buffer
/// protocol (read-only, one byte an item): `array.frombytes` or
/// `bytes()` copies them straight from the core's memory, which is freed
/// with the object.
#[pyclass(frozen, module = "tcplab._core")]
struct Blob(Vec<u8>);

#[pymethods]
impl Blob {
    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// # Safety
    /// `view` is the `Py_buffer` Python asks this object to fill.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut pyo3::ffi::Py_buffer, flags: std::os::raw::c_int) -> PyResult<()> {
        let bytes = &slf.get().0;
        let len = pyo3::ffi::Py_ssize_t::try_from(bytes.len()).map_err(|_| pyo3::exceptions::PyBufferError::new_err("a column too long to share"))?;
        // The view keeps `slf` alive (it takes a reference to it), so the
        // bytes, which a frozen object never changes, outlive it.
        if unsafe { pyo3::ffi::PyBuffer_FillInfo(view, slf.as_ptr(), bytes.as_ptr() as *mut _, len, 1, flags) } == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }
}

/// Run a normalized scenario (JSON text, whose packed columns may refer to
/// `blobs`) and return its results as columns: JSON text in which each
/// column of numbers is `{"bin": k, "dtype": ...}`, and the list of those
/// columns' bytes (little-endian), each a read-only [`Blob`] over the
/// core's own memory: no copy is made until Python makes one. `at_loop`, a
/// callable, is called with no arguments once the
/// simulation is built, just before its loop (with the interpreter lock held
/// for the call); what it raises is printed as an unraisable exception and the
/// run goes on. `cancel`, a `Cancel`, stops the loop once set.
#[pyfunction]
#[pyo3(signature = (scenario, blobs = Vec::new(), at_loop = None, cancel = None))]
fn run_columns<'py>(
    py: Python<'py>,
    scenario: &str,
    blobs: Vec<PyBackedBytes>,
    at_loop: Option<Py<PyAny>>,
    cancel: Option<PyRef<'py, Cancel>>,
) -> PyResult<(String, Vec<Blob>)> {
    let cancel = cancel.map(|c| Arc::clone(&c.0));
    let (text, blobs) = run(py, scenario, blobs, at_loop, cancel, Form::Columns { blobs: true })?;
    Ok((text, blobs.into_iter().map(Blob).collect()))
}

/// Check a normalized scenario (JSON text) as a run would, without running
/// it; raise what the run would raise (with the interpreter lock released).
#[pyfunction]
fn check_json(py: Python<'_>, scenario: &str) -> PyResult<()> {
    let owned = scenario.to_owned();
    to_py(py.detach(move || catch_unwind(|| tcplab_core::check_json(&owned))))
}

/// A TOML document as JSON text (keys in the document's order), or `None`
/// where JSON cannot carry it exactly or it is not valid TOML: the caller
/// then parses it with `tomllib` (`tcplab_core::toml_json`).
#[pyfunction]
fn toml_to_json(text: &str) -> Option<String> {
    tcplab_core::toml_json::toml_to_json(text)
}

type Output = (String, Vec<Vec<u8>>);

/// The results' form: JSON rows, or JSON columns (with their blobs).
enum Form {
    Rows,
    Columns { blobs: bool },
}

/// Run with the interpreter lock released; errors and panics become exceptions.
fn run(py: Python<'_>, scenario: &str, blobs: Vec<PyBackedBytes>, at_loop: Option<Py<PyAny>>, cancel: Option<Arc<AtomicBool>>, form: Form) -> PyResult<Output> {
    let owned = scenario.to_owned();
    let res = py.detach(move || {
        catch_unwind(AssertUnwindSafe(|| {
            if std::env::var_os(PANIC_HOOK).is_some() {
                panic!("{PANIC_HOOK} is set: a deliberate panic");
            }
            let views: Vec<&[u8]> = blobs.iter().map(|b| &b[..]).collect();
            let hook = || {
                if let Some(f) = at_loop {
                    Python::attach(|py| {
                        if let Err(e) = f.call0(py) {
                            e.write_unraisable(py, Some(f.bind(py)));
                        }
                    });
                }
            };
            match form {
                Form::Rows => tcplab_core::run_json_encoded(&owned, &views, hook, cancel.as_deref(), |r| tcplab_core::stats::to_json(r).map(|text| (text, Vec::new())))
                    .and_then(|out| out.map_err(|e| tcplab_core::Error::Parse(e.to_string()))),
                Form::Columns { blobs } => tcplab_core::run_json_columns(&owned, &views, hook, cancel.as_deref(), blobs),
            }
        }))
    });
    to_py(res)
}

/// The core's result as Python's: its errors become `CoreScenarioError`
/// (the field, the message), a panic `CorePanic`.
fn to_py<T>(res: std::thread::Result<tcplab_core::Result<T>>) -> PyResult<T> {
    match res {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => Err(CoreScenarioError::new_err((e.field().map(str::to_owned), e.message()))),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "a panic without a message".to_owned());
            Err(CorePanic::new_err(msg))
        }
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_columns, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_class::<Cancel>()?;
    m.add_class::<Blob>()?;
    m.add("CoreScenarioError", m.py().get_type::<CoreScenarioError>())?;
    m.add("CorePanic", m.py().get_type::<CorePanic>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
