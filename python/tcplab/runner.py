"""Running a sweep: a local process pool or a Dask ``distributed`` cluster,
a progress bar, clean interruption, and resumption from the store."""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import current_process, get_context
from typing import Any, Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from .errors import FieldProblem, TcplabError, UsageError
from .store import Store
from .sweep import Run, Sweep
from .worker import die_with_parent, execute, execute_many

#: A finished run: the run, its payload (None if it failed) and its error.
Outcome = tuple[Run, "dict[str, Any] | None", "str | None"]


@dataclass
class SweepReport:
    total: int
    skipped: int
    done: int
    failed: int
    interrupted: bool
    #: The error of the first run that failed, if one did.
    first_error: str | None = None


#: Finished runs wait to be written together until this many have finished,
#: or until their simulations took WRITE_AT_WORK_S seconds in all and
#: WRITE_COST_RATIO times as long as the last write took. A write costs the
#: store several statements and a commit whatever it holds (0.02-1 s on a
#: slow disk as the store grows, more than many a run's simulation), so the
#: parent spends at most about a quarter as long writing as the workers
#: spent on what it writes; and a sweep killed with SIGKILL loses no more
#: than that much finished work (and what was running).
WRITE_AT_RUNS = 256
WRITE_AT_WORK_S = 0.05
WRITE_COST_RATIO = 4.0


def write_due(waiting: int, work_s: float, last_write_s: float) -> bool:
    """Whether `waiting` finished runs, which took `work_s` seconds to
    simulate, are written now, the last write having taken `last_write_s`."""
    return waiting >= WRITE_AT_RUNS or work_s >= max(WRITE_AT_WORK_S, WRITE_COST_RATIO * last_write_s)

#: A worker is handed runs in tasks of about this many seconds of
#: simulation (judged from the runs finished so far; one run per task until
#: then, and for runs longer than this), at most TASK_MAX_RUNS: each task
#: costs the process pool a few milliseconds of hand-over, as much as a
#: short run's simulation.
TASK_S = 0.05
TASK_MAX_RUNS = 64


def _unimportable_main() -> str | None:
    """The path of the main script when spawned workers cannot import it
    again (a script read from standard input is `<stdin>`); None when they
    can, or when there is no script (an interactive session, `python -c`)."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None):
        return None  # run as a module (`python -m`): the workers import it by name
    path = getattr(main, "__file__", None)
    return None if path is None or os.path.isfile(path) else str(path)


def _local(runs: list[Run], jobs: int) -> Iterator[list[Outcome]]:
    """Yield, as runs finish, the batch of (run, payload, error) finished
    since the last yield. Runs go to the workers in tasks of several short
    runs (`TASK_S`), and at most max(2 jobs, 16) tasks are in flight, so the
    workers keep busy while the store writes the last batch."""
    if jobs == 1:
        from .api import interruptibly

        # Each run stoppable by Ctrl-C in its loop (about 0.1 ms a run for the helper thread).
        for r in runs:
            yield [(r, *interruptibly(lambda cancel: execute_many([r.core_json], cancel))[0])]  # noqa: B023 - called at once
        return
    script = _unimportable_main()
    if script is not None:
        raise TcplabError(f"the script that runs the sweep has no file its workers could import ({script!r}): each worker "
                          "imports the script again, as multiprocessing's spawn method does; save the script as a file, "
                          "or run the sweep with one job (jobs=1, --jobs 1), which runs in this process")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=die_with_parent, initargs=(os.getpid(),))
    finished = False
    try:
        pending: dict[Any, list[Run]] = {}
        left = iter(runs)
        depth = max(2 * jobs, 16)
        sim_s, finished_runs = 0.0, 0

        def submit() -> bool:
            size = 1 if not finished_runs else max(1, min(TASK_MAX_RUNS, int(TASK_S * finished_runs / max(sim_s, 1e-9))))
            task = [r for _, r in zip(range(size), left)]
            if task:
                pending[pool.submit(execute_many, [r.core_json for r in task])] = task
            return bool(task)

        while len(pending) < depth and submit():
            pass
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            batch: list[Outcome] = []
            for f in done:
                task = pending.pop(f)
                err = f.exception()
                if isinstance(err, BrokenProcessPool):  # no run's own failure: no worker is left
                    raise TcplabError(f"a worker process of the sweep stopped unexpectedly (killed, out of memory, or {GUARD_HINT})") from err
                if err:
                    batch += [(r, None, f"{type(err).__name__}: {err}") for r in task]
                    continue
                for r, (payload, error) in zip(task, f.result()):
                    batch.append((r, payload, error))
                    if payload is not None:
                        sim_s += payload["wall_s"]
                        finished_runs += 1
            while len(pending) < depth and submit():
                pass
            yield batch
        finished = True
    finally:
        if not finished:
            # Stopped with runs in flight (Ctrl-C, or a failure): their results
            # would be dropped, and the interpreter's exit waits for the pool's
            # workers, which ran each run to its end (a sweep of 100,000 s runs
            # took 16 s to stop). End them now; a killed run is run again by the
            # next invocation. Not only the runs `pending` knows of: a Ctrl-C
            # inside `pool.submit` leaves a task queued for a worker that
            # `pending` never heard of. `_processes` is the pool's own map of
            # its workers (Python 3.14's `terminate_workers` does this).
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)


def _dask(runs: list[Run], scheduler: str) -> Iterator[list[Outcome]]:
    from distributed import Client, as_completed

    try:
        client = Client(scheduler)
    except (OSError, TimeoutError, ValueError) as e:  # unreachable, or not an address
        raise TcplabError(f"--scheduler {scheduler!r}: cannot reach a Dask scheduler there: {e}") from None
    try:
        futures = {client.submit(execute, r.core_json, pure=False, key=f"tcplab-{r.run_id}"): r for r in runs}
        for finished in as_completed(futures).batches():
            batch: list[Outcome] = []
            for f in finished:
                r = futures[f]
                if f.status == "error":
                    err = f.exception()
                    batch.append((r, None, f"{type(err).__name__}: {err}"))
                else:
                    batch.append((r, f.result(), None))
            yield batch
    finally:
        client.close()


class _HeldInterrupts:
    """Ctrl-C held off while the store is opened, written or closed.

    DuckDB turns a SIGINT that arrives during a statement into an error of
    its own ("Query interrupted"), and one during the rollback that follows
    into another, so a Ctrl-C at that moment ended a sweep with a traceback
    instead of a clean stop. While a section is held, a Ctrl-C is only noted,
    and raised as KeyboardInterrupt when the section ends; elsewhere (a run
    in this process, the wait for workers) it is raised at once, as Python
    does. Installed only in the main thread over Python's own handler, and
    put back when the sweep ends."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending = False
        self._before: Any = None

    def __enter__(self) -> "_HeldInterrupts":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._before = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        if self._before is not None:
            signal.signal(signal.SIGINT, self._before)
            self._before = None

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.depth:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextmanager
    def held(self, raise_pending: bool = True) -> Iterator[None]:
        """Hold Ctrl-C over the block; at its end, raise one that came meanwhile
        (or, with `raise_pending` false, leave it for `pending` to tell)."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
        if raise_pending and self.pending and not self.depth:
            self.pending = False
            raise KeyboardInterrupt


#: What a script that runs sweeps needs: workers are started with the spawn
#: method, which imports the script again in each one.
GUARD_HINT = ("a script that runs the sweep without `if __name__ == \"__main__\":` around its code: each worker "
              "imports the script again, as multiprocessing's spawn method does")


def run_sweep(
    sweep: Sweep,
    jobs: int | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    progress: bool = True,
    on_result: Callable[[Run], None] | None = None,
) -> SweepReport:
    """Run every run of `sweep` not yet in its store. Ctrl-C stops cleanly:
    finished runs are kept, and running the sweep again does the rest."""
    if getattr(current_process(), "_inheriting", False):
        # A worker starting up is importing the script that started the
        # sweep (multiprocessing's own check for this, `_check_not_importing_main`).
        raise TcplabError(f"run_sweep was called by a worker process as it started: {GUARD_HINT}")
    _check_arguments(sweep, jobs, backend, scheduler, on_result)
    with _HeldInterrupts() as interrupts:
        return _run(sweep, jobs, backend, scheduler, progress, on_result, interrupts)


def _check_arguments(sweep: Any, jobs: Any, backend: Any, scheduler: Any, on_result: Any) -> None:
    """run_sweep's arguments, refused before the store is opened:
    `backend="foo"` ran locally, `jobs=0` or `-2` one worker, a `scheduler`
    with the local backend was unused, and an `on_result` that is no
    function stopped the sweep at its first write."""
    if not isinstance(sweep, Sweep):
        raise TypeError(f"sweep is a tcplab.sweep.Sweep (load_sweep or sweep_from_configs makes one), not {type(sweep).__name__}")
    bad: list[FieldProblem] = []
    if backend not in ("local", "dask"):
        bad.append(FieldProblem("backend", "allowed: 'local' or 'dask'", backend, True))
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        bad.append(FieldProblem("jobs", "expected a number of worker processes, at least 1 (None: one per core)", jobs, True))
    elif jobs is not None and backend == "dask":
        bad.append(FieldProblem("jobs", "applies to backend 'local' only (with dask, the cluster's workers run the runs)", jobs, True))
    if backend == "dask" and not scheduler:
        bad.append(FieldProblem("scheduler", "backend 'dask' needs the scheduler's address, such as 'tcp://head:8786'"))
    if scheduler is not None and backend == "local":
        bad.append(FieldProblem("scheduler", "applies with backend 'dask' only", scheduler, True))
    if on_result is not None and not callable(on_result):
        bad.append(FieldProblem("on_result", "expected a function called with each stored Run, or None", on_result, True))
    if bad:
        raise UsageError(bad)


def _run(sweep: Sweep, jobs: int | None, backend: str, scheduler: str | None, progress: bool,
         on_result: Callable[[Run], None] | None, interrupts: _HeldInterrupts) -> SweepReport:  # fmt: skip
    with interrupts.held():
        store = Store(sweep.store)
    try:
        with interrupts.held():
            store.set_sweep_runs(sweep.name, sweep.runs)
            done = store.done_ids()
            # Between writes the store is closed when another process waits to
            # open it (`tcplab analyze` while this sweep runs, or another sweep).
            store.release_if_wanted()
        # A run two configurations share (`sweep_from_configs(shared_runs=True)`)
        # is simulated and written once.
        todo, seen = [], set(done)
        for r in sweep.runs:
            if r.run_id not in seen:
                seen.add(r.run_id)
                todo.append(r)
        report = SweepReport(total=len(sweep.runs), skipped=len(sweep.runs) - len(todo), done=0, failed=0, interrupted=False)
        if not todo:
            return report
        if backend == "dask":
            stream = _dask(todo, scheduler or "")
        else:
            stream = _local(todo, max(1, jobs or os.cpu_count() or 1))
        columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
        with Progress(*columns, disable=not progress, transient=False) as bar:
            task = bar.add_task(sweep.name, total=len(todo))
            waiting: list[Outcome] = []

            def store_waiting(raise_pending: bool = True) -> None:
                # A Ctrl-C during the write is held until the runs are
                # written and counted, then raised.
                with interrupts.held(raise_pending):
                    store.write_runs(sweep.name, waiting, sweep.traces)
                    store.release_if_wanted()
                    stored = waiting[:]
                    waiting.clear()
                    for run, _, error in stored:
                        if error:
                            report.failed += 1
                            report.first_error = report.first_error or error
                        else:
                            report.done += 1
                        bar.advance(task)
                        if on_result:
                            on_result(run)

            work, write_s = 0.0, 0.0
            try:
                for batch in stream:
                    waiting += batch
                    work += sum(payload["wall_s"] for _, payload, _ in batch if payload is not None)
                    if write_due(len(waiting), work, write_s):
                        t0 = time.perf_counter()
                        store_waiting()
                        write_s = time.perf_counter() - t0
                        work = 0.0
                if waiting:
                    store_waiting()
            except KeyboardInterrupt:
                report.interrupted = True
                if waiting:
                    # Finished runs are kept, written now (another Ctrl-C
                    # meanwhile changes nothing: the sweep is stopping).
                    store_waiting(raise_pending=False)
            finally:
                close = getattr(stream, "close", None)
                if close:
                    close()
        return report
    finally:
        with interrupts.held(raise_pending=False):
            store.close()
