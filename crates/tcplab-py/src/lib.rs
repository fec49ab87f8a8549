//! PyO3 bindings of tcplab-core: the private module `tcplab._core`.
//!
//! Only glue lives here: the public API is the `tcplab` Python package.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(_core, CoreScenarioError, PyException, "A scenario the core refused.");

/// Run a normalized scenario (JSON text) and return the results as JSON text.
///
/// The simulation runs with the interpreter lock released.
#[pyfunction]
fn run_json(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let owned = scenario.to_owned();
    let res = py.detach(move || tcplab_core::run_json(&owned));
    match res {
        Ok(r) => serde_json_string(&r),
        Err(e) => Err(CoreScenarioError::new_err(e.to_string())),
    }
}

fn serde_json_string(r: &tcplab_core::stats::Results) -> PyResult<String> {
    tcplab_core::stats::to_json(r).map_err(|e| PyException::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add("CoreScenarioError", m.py().get_type::<CoreScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
