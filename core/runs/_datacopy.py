"""Copies of an :class:`~core.data.abdata.ABData` in one ``.npz`` file, without pickle.

Used to hand uploaded data to the training processes of :mod:`core.runs.jobs`
(:meth:`core.runs.store.RunStore.save_data`).  ``X``, ``y`` and ``t`` are kept — not the side
columns, scores or warnings — and for the two-arm view of an A/B/n experiment its arms (names,
arm codes, outcome, design), which enter the fingerprint.  Numeric columns keep their dtype;
``category`` columns are stored as integer codes with their levels (text or numbers) in a
JSON header, so the copy has the same :meth:`~core.data.abdata.ABData.fingerprint` as the
original.  The file is read with ``np.load(..., allow_pickle=False)``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from core.data.abdata import ABData, DataError

__all__ = ["COPY_FORMAT", "copy_format", "read_abdata_npz", "write_abdata_npz"]

#: Version of the copy's layout; 2 keeps an A/B/n experiment's arms (copies of format 1 of
#: such data read back with another fingerprint, so a copy of an older format is replaced).
COPY_FORMAT = 2


def write_abdata_npz(data: ABData, path: Path) -> None:
    """Write ``data`` to ``path`` atomically (temporary file, then ``os.replace``)."""
    arrays, columns = {"y": data.y, "t": data.t}, []
    for j, col in enumerate(data.X.columns):
        s = data.X[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = s.cat.categories
            numeric = isinstance(cats.dtype, np.dtype) and cats.dtype.kind in "biuf"
            if not numeric and not all(isinstance(v, str) for v in cats):
                raise DataError(f"Column {col!r}: categories of dtype {cats.dtype} cannot "
                                "be stored; use text or number levels.")
            columns.append({"name": str(col), "kind": "category", "levels": cats.tolist(),
                            "levels_dtype": cats.dtype.str if numeric else None,
                            "ordered": bool(s.cat.ordered)})
            arrays[f"x{j}"] = s.cat.codes.to_numpy()
        elif isinstance(s.dtype, np.dtype) and s.dtype.kind in "biuf":
            columns.append({"name": str(col), "kind": "numeric"})
            arrays[f"x{j}"] = s.to_numpy()
        else:
            raise DataError(f"Column {col!r} has dtype {s.dtype}; only numeric and "
                            "category columns can be handed to the training process.")
    header = {"name": data.name, "columns": columns, "format": COPY_FORMAT}
    multi = data.multiarm
    if multi is not None:  # the experiment's arms enter the fingerprint (ABData._digest);
        # its features are the view's (the same rows), read back as one frame
        arrays.update(arm_t=multi.t, arm_y=multi.y, arm_design=multi.design)
        header["multiarm"] = {"arms": list(multi.arms), "name": multi.name,
                              "design_assumed": bool(multi.design_assumed)}
    arrays["header"] = np.array(json.dumps(header))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:16]}-", suffix=".npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def copy_format(path: Path) -> int | None:
    """The layout version of the copy at ``path`` (1 for copies written before versions were
    recorded), read from its small header only; None when it cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return int(json.loads(str(z["header"])).get("format", 1))
    except (OSError, ValueError, KeyError):
        return None


def read_abdata_npz(path: Path) -> ABData:
    """Read a file written by :func:`write_abdata_npz`."""
    with np.load(path, allow_pickle=False) as z:
        header = json.loads(str(z["header"]))
        cols = {}
        for j, spec in enumerate(header["columns"]):
            values = z[f"x{j}"]
            if spec["kind"] == "category":
                levels = pd.Index(spec["levels"], dtype=spec["levels_dtype"] and
                                  np.dtype(spec["levels_dtype"]))
                dtype = pd.CategoricalDtype(levels, ordered=spec["ordered"])
                values = pd.Categorical.from_codes(values, dtype=dtype)
            cols[spec["name"]] = values
        X = pd.DataFrame(cols, index=pd.RangeIndex(len(z["y"])))
        multi = header.get("multiarm")
        if multi is not None:
            from core.data.multiarm import MultiArmData

            multi = MultiArmData(X=X, y=z["arm_y"], t=z["arm_t"], arms=multi["arms"],
                                 design=z["arm_design"], name=multi["name"],
                                 design_assumed=multi["design_assumed"])
        data = ABData(X=X, y=z["y"], t=z["t"], name=header["name"], multiarm=multi)
    return data
