"""Run independent jobs on local processes or on a Dask cluster, whichever is asked for.

Every job is a pure function of its argument, so the result does not depend on where it
ran. ``dask.distributed`` (the ``cluster`` extra) is imported only when a scheduler is given.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, as_completed

__all__ = ["DEFAULT_WORKERS", "unordered", "describe"]

#: Local worker processes: one per core of the 2-core machines this project runs on.
DEFAULT_WORKERS = 2


def unordered(fn, items, *, workers: int = DEFAULT_WORKERS, scheduler: str | None = None):
    """Yield ``(i, result, error)`` for ``fn(items[i])`` in the order the jobs finish.

    ``error`` is the exception a job raised (its ``result`` is then None): one failing
    job does not stop the others. ``scheduler``: a ``dask.distributed`` scheduler address
    (``tcp://host:8786``); otherwise ``workers`` local processes (1: in this process).
    Closing the generator early cancels the jobs not started.
    """
    items = list(items)
    if scheduler is not None:
        yield from _dask(fn, items, scheduler)
    elif workers == 1:
        for i, item in enumerate(items):
            try:
                yield i, fn(item), None
            except Exception as error:  # reported to the caller like a remote failure
                yield i, None, error
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            try:
                for future in as_completed(futures):
                    error = future.exception()
                    yield futures[future], None if error else future.result(), error
            finally:
                for future in futures:
                    future.cancel()


def _dask(fn, items, scheduler: str):
    try:
        from dask.distributed import Client, as_completed as dask_completed
    except ImportError:
        raise RuntimeError("--scheduler needs dask.distributed: pip install -e '.[cluster]'") from None
    with Client(scheduler) as client:
        futures = client.map(fn, items, pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        try:
            for future in dask_completed(futures):
                error = future.exception() if future.status == "error" else None
                yield index[future.key], None if error else future.result(), error
        finally:
            client.cancel(futures)


def describe(workers: int, scheduler: str | None) -> str:
    """Where the jobs run, for reports."""
    return f"dask scheduler {scheduler}" if scheduler else f"{workers} local process{'es' if workers > 1 else ''}"
