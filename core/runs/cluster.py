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

Without any client, the curves and AUUC tables of Dask collections still compute, on dask's
default scheduler (threads of the calling process; the same numbers), while the Dask models
refuse: LightGBM's Dask estimators need a ``distributed`` client.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["SCHEDULER_ENV", "connect"]

#: Environment variable naming the scheduler address of :func:`connect`.
SCHEDULER_ENV = "UPRANK_DASK_SCHEDULER"


def connect(address: str | None = None, *, n_workers: int | None = None,
            memory_limit: str = "auto") -> Any:
    """A ``distributed.Client``, made the current one (see the module docstring)."""
    from distributed import Client, LocalCluster

    address = address or os.environ.get(SCHEDULER_ENV) or None
    if address:
        return Client(address)
    cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                           processes=True, dashboard_address=None, memory_limit=memory_limit)
    return Client(cluster)
