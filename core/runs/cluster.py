"""Connecting UpRank to a Dask cluster.

Everything in ``core`` that accepts Dask collections (:func:`core.evaluation.auuc_table`,
:func:`core.evaluation.uplift_curve`, :mod:`core.models.distributed`) runs on Dask's
*current* client.  :func:`connect` makes one:

* ``connect("tcp://scheduler:8786")`` — an existing cluster (``dask scheduler`` on one
  machine, ``dask worker tcp://scheduler:8786`` on each of the others; or any deployment:
  Kubernetes, YARN, SLURM through ``dask-jobqueue``);
* ``connect()`` with ``$UPRANK_DASK_SCHEDULER`` set — that address;
* ``connect()`` otherwise — a ``distributed.LocalCluster`` on this machine (one worker
  process per core, one thread each), which is what the tests and ``bench.scale`` use.

The workers run ``core``'s functions, so they must import ``core`` as the client does: install
it on every worker machine (``pip install -e .`` in the project, or the project folder on the
workers' ``PYTHONPATH``).  :func:`connect` checks that on the workers connected at that
moment and names any that cannot, instead of a task failing later with a deserialisation
error.

Without any client, the curves and AUUC tables of Dask collections still compute, on dask's
default scheduler (threads of the calling process; the same numbers), while the Dask models
refuse: LightGBM's Dask estimators need a ``distributed`` client.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["SCHEDULER_ENV", "check_workers", "connect"]

#: Environment variable naming the scheduler address of :func:`connect`.
SCHEDULER_ENV = "UPRANK_DASK_SCHEDULER"


def connect(address: str | None = None, *, n_workers: int | None = None,
            memory_limit: str = "auto") -> Any:
    """A ``distributed.Client``, made the current one (see the module docstring)."""
    from distributed import Client, LocalCluster

    address = address or os.environ.get(SCHEDULER_ENV) or None
    if address:
        client = Client(address)
        try:
            check_workers(client)
        except BaseException:  # not handed back: not left open either
            client.close()
            raise
        return client
    cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                           processes=True, dashboard_address=None, memory_limit=memory_limit)
    return Client(cluster)


#: What a worker imports to run ``core``'s Dask tasks (the deepest module they call).
WORKER_MODULE = "core.evaluation._dask"


def check_workers(client: Any, module: str = WORKER_MODULE) -> None:
    """Raise a ``RuntimeError`` naming the workers of ``client`` that cannot import
    ``module`` (and the folder to put on their ``PYTHONPATH``); nothing when all can.

    A worker without ``core`` fails a task only when it unpickles one: "Error during
    deserialization of the task graph … No module named 'core'".  Workers that join later
    are not checked."""
    def probe(name: str = module) -> str | None:  # nested: sent to the workers by value
        import importlib

        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 — the worker's own message is the point
            return f"{type(error).__name__}: {error}"
        return None

    problems = {worker: problem for worker, problem in client.run(probe).items() if problem}
    if problems:
        from pathlib import Path

        root = Path(__file__).resolve().parents[2]
        listed = "; ".join(f"{w}: {p}" for w, p in sorted(problems.items()))
        raise RuntimeError(f"{len(problems)} of {len(client.scheduler_info()['workers'])} Dask "
                           f"workers cannot import UpRank's {module.split('.')[0]!r} package "
                           f"({listed}). Install it where they run (pip install -e {root}) or "
                           f"start them with PYTHONPATH={root}.")
