"""A/B data: the :class:`ABData` container, the CSV reader, benchmark loaders with checksums,
synthetic worlds with known effects, hygiene checks, train/test splits, stored uploads and
the dataset choice as URL query parameters; learning-to-rank data (:class:`LTRData`, the
LETOR reader, MQ2008, a synthetic ranking world) in :mod:`core.data.letor`.

>>> from core.data import make_uplift_world
>>> data = make_uplift_world(n=1_000, random_state=0)
>>> data.n, sorted(set(data.t.tolist()))
(1000, [0, 1])
"""

from core.data import (
    abdata,
    abmapping,
    csvio,
    datafiles,
    datasets,
    hygiene,
    large,
    letor,
    multiarm,
    ranking_uploads,
    selection,
    splits,
    synthetic,
    uploads,
)
from core.data.abdata import *  # noqa: F403 - each module's __all__ is its API
from core.data.abmapping import *  # noqa: F403
from core.data.csvio import *  # noqa: F403
from core.data.datafiles import *  # noqa: F403
from core.data.datasets import *  # noqa: F403
from core.data.hygiene import *  # noqa: F403
from core.data.large import *  # noqa: F403
from core.data.letor import *  # noqa: F403
from core.data.multiarm import *  # noqa: F403
from core.data.ranking_uploads import *  # noqa: F403
from core.data.selection import *  # noqa: F403
from core.data.splits import *  # noqa: F403
from core.data.synthetic import *  # noqa: F403
from core.data.uploads import *  # noqa: F403

__all__ = [
    *abdata.__all__,
    *abmapping.__all__,
    *csvio.__all__,
    *datafiles.__all__,
    *datasets.__all__,
    *hygiene.__all__,
    *large.__all__,
    *letor.__all__,
    *multiarm.__all__,
    *ranking_uploads.__all__,
    *selection.__all__,
    *splits.__all__,
    *synthetic.__all__,
    *uploads.__all__,
]
