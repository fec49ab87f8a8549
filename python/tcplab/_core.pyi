"""Type stubs of the compiled core (private: use the ``tcplab`` package)."""

__version__: str

class CoreScenarioError(Exception):
    """args: (field or None, message)."""

class CorePanic(Exception): ...

def run_json(scenario: str, columns: bool = False) -> str:
    """Run a normalized scenario given as JSON text; return the results as JSON
    text: each table a list of rows, or with `columns`, an object of columns."""

class Cancel:
    """A flag that stops a run's loop once set (from any thread); the run then
    raises CoreScenarioError ("the run was cancelled")."""

    def set(self) -> None: ...
    def is_set(self) -> bool: ...

def check_json(scenario: str) -> None: ...
def toml_to_json(text: str) -> str | None: ...
class Blob:
    """The bytes of one result column, read through the buffer protocol
    (read-only, one byte an item) without a copy."""

    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

def run_columns(scenario: str, blobs: list[bytes] = ..., at_loop: object = None, cancel: Cancel | None = None) -> tuple[str, list[Blob]]:
    """Run a normalized scenario (whose packed integer columns may be
    ``{"bin": k, "dtype": "<u4" | "<u8"}``, the little-endian bytes of
    ``blobs[k]``); return its results as columns: JSON text in which each
    column of numbers is ``{"bin": k, "dtype": "<i8" | "<f8"}``, and the
    list of those columns' little-endian bytes, each a :class:`Blob` over
    the core's memory."""
