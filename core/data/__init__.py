"""A/B data: the :class:`ABData` container, the CSV reader, benchmark loaders with checksums,
synthetic worlds with known effects, hygiene checks and train/test splits.

>>> from core.data import make_uplift_world
>>> data = make_uplift_world(n=1_000, random_state=0)
>>> data.n, sorted(set(data.t.tolist()))
(1000, [0, 1])
"""

from core.data.abdata import ABData, DataError, to_csv_bytes
from core.data.abmapping import MAX_CATEGORY_LEVELS, arm_codes, frame_to_abdata, guess_columns
from core.data.csvio import peek_csv
from core.data.datafiles import (
    REGISTRY,
    cache_dir,
    data_dir_candidates,
    fetch_data_file,
    find_data_file,
    sha256_file,
)
from core.data.datasets import (
    DATASETS,
    DatasetSpec,
    load_criteo_head,
    load_dataset,
    load_hillstrom,
    load_information,
    read_ab_csv,
)
from core.data.hygiene import SMD_THRESHOLD, SRM_ALPHA, covariate_balance, srm_test
from core.data.splits import SCHEMES, make_splits
from core.data.synthetic import PAPER_SCENARIOS, make_paper_simulation, make_uplift_world

__all__ = [
    "DATASETS", "MAX_CATEGORY_LEVELS", "PAPER_SCENARIOS", "REGISTRY", "SCHEMES", "SMD_THRESHOLD",
    "SRM_ALPHA", "ABData", "DataError", "DatasetSpec", "arm_codes", "cache_dir",
    "covariate_balance", "data_dir_candidates", "fetch_data_file", "find_data_file",
    "frame_to_abdata", "guess_columns", "load_criteo_head", "load_dataset", "load_hillstrom",
    "load_information", "make_paper_simulation", "make_splits", "make_uplift_world",
    "peek_csv", "read_ab_csv", "sha256_file", "srm_test", "to_csv_bytes",
]
