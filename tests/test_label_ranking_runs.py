"""The Table 1 protocol's tuning (core.runs.label_runs): λ and C chosen inside each fold.

The paper: "used the default parameters from BudgetedSVM … with the exception of the λ
parameter which, together with competitors' parameters, was configured through
cross-validation on a small held-out set".  References here, never the code under test: the
rows every fit and prediction saw (recorded by a spy), the held-out errors and the outer
errors recomputed with the estimators called directly and ε_dis counted pair by pair.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import KFold

import core.label_ranking as lr
from core.runs import label_runs
from core.runs.label_runs import LabelExperiment, run_experiment


def _eps(Y, P) -> float:
    """ε_dis by brute force: share of each row's known pairs put the wrong way, averaged."""
    errs = []
    for y, p in zip(Y, P):
        rank = np.where(y > 0, y, len(y) + 1)
        known = wrong = 0
        for i, j in itertools.combinations(range(len(y)), 2):
            if rank[i] != rank[j]:
                known += 1
                wrong += (rank[i] < rank[j]) != (p[i] < p[j])
        if known:
            errs.append(wrong / known)
    return float(np.mean(errs))


def _data(n=300, L=4, seed=0):
    """Column 0 is the row's id (so a spy can tell which rows a model saw); rankings depend
    on the other two features."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    util = Z @ rng.normal(size=(2, L)) + rng.normal(scale=0.5, size=(n, L))
    Y = np.zeros((n, L), dtype=np.int64)
    for r in range(n):
        k = 1 + r % 3
        top = np.argsort(-util[r])[:k]
        Y[r, top] = np.arange(1, k + 1)
    X = np.column_stack([np.arange(n, dtype=float), Z])
    return SimpleNamespace(X=X, Y=Y, groups=None, feature_blocks={}, labels=None)


class _Spy:
    """Records the row ids (column 0 of X) of every LogisticPerLabel fit and predict."""

    def __init__(self, monkeypatch):
        self.calls = []
        fit, predict = lr.LogisticPerLabel.fit, lr.LogisticPerLabel.predict
        spy = self

        def spy_fit(est, X, Y, **kw):
            spy.calls.append(("fit", est.C, np.asarray(X)[:, 0].astype(int)))
            return fit(est, X, Y, **kw)

        def spy_predict(est, X, **kw):
            spy.calls.append(("predict", est.C, np.asarray(X)[:, 0].astype(int)))
            return predict(est, X, **kw)

        monkeypatch.setattr(lr.LogisticPerLabel, "fit", spy_fit)
        monkeypatch.setattr(lr.LogisticPerLabel, "predict", spy_predict)


GRID = (0.01, 0.1, 10.0)


def test_lr_tunes_c_on_held_out_training_users_and_refits_on_all_of_them(monkeypatch):
    data = _data()
    spy = _Spy(monkeypatch)
    config = LabelExperiment(None, (), methods=("LR",), n_folds=3, seed=4, c_grid=GRID,
                             data_digest="x")
    meta, frames = run_experiment(config, data)
    monkeypatch.undo()  # the references below call the estimator itself
    folds = list(KFold(3, shuffle=True, random_state=4).split(data.Y))
    per_fold = len(GRID) * 2 + 2  # (fit, predict) per C, then the final fit and predict
    assert len(spy.calls) == 3 * per_fold
    expected_errs = []
    for f, (train, test) in enumerate(folds):
        calls = spy.calls[f * per_fold:(f + 1) * per_fold]
        fit_rows, held = calls[0][2], calls[1][2]
        # the tuning sees training users only: 20 % held out, the rest fitted, no test user
        assert set(fit_rows) | set(held) == set(train) and not set(fit_rows) & set(held)
        assert len(held) == round(0.2 * len(train))
        scores = []
        for k, C in enumerate(GRID):
            (kind1, c1, r1), (kind2, c2, r2) = calls[2 * k], calls[2 * k + 1]
            assert (kind1, kind2, c1, c2) == ("fit", "predict", C, C)
            assert np.array_equal(r1, fit_rows) and np.array_equal(r2, held)
            model = lr.LogisticPerLabel(C=C, random_state=4).fit(data.X[fit_rows],
                                                                  data.Y[fit_rows])
            scores.append(_eps(data.Y[held], model.predict(data.X[held])))
        best = GRID[int(np.argmin(scores))]
        rows = frames["tuning"][frames["tuning"]["fold"] == f + 1]
        np.testing.assert_allclose(rows["eps_dis"], scores, atol=1e-12)
        assert rows.loc[rows["chosen"], "value"].tolist() == [best]
        chosen = frames["chosen"][frames["chosen"]["fold"] == f + 1]
        assert chosen[["parameter", "value", "how"]].values.tolist() == [["C", best, "held-out"]]
        # the chosen C refitted on every training user, scored on the test users only
        (k1, c1, r1), (k2, c2, r2) = calls[-2], calls[-1]
        assert (k1, k2, c1, c2) == ("fit", "predict", best, best)
        assert set(r1) == set(train) and set(r2) == set(test)
        model = lr.LogisticPerLabel(C=best, random_state=4).fit(data.X[train], data.Y[train])
        expected_errs.append(_eps(data.Y[test], model.predict(data.X[test])))
    t1 = frames["table1"].set_index("method")
    assert t1.loc["LR", "eps_dis"] == pytest.approx(np.mean(expected_errs), abs=1e-12)
    picked = frames["chosen"]["value"].tolist()
    assert t1.loc["LR", "chosen per fold"] == "C = " + ", ".join(f"{v:g}" for v in picked)
    assert meta["tuning"]["c_grid"] == list(GRID) and meta["protocol"] == label_runs.PROTOCOL


def test_amm_rank_tunes_lambda_and_the_test_rows_never_choose():
    """Moving the test users' rankings does not change any λ chosen."""
    data = _data(n=240, seed=1)
    config = LabelExperiment(None, (), methods=("AMM-rank", "AMM"), n_folds=2, seed=0,
                             lam_grid=(1e-4, 0.1, 3.0), data_digest="x")
    _, frames = run_experiment(config, data)
    chosen = frames["chosen"]
    assert set(chosen["parameter"]) == {"λ"} and set(chosen["how"]) == {"held-out"}
    assert len(frames["tuning"]) == 2 * 2 * 3  # methods × folds × grid
    train, test = next(KFold(2, shuffle=True, random_state=0).split(data.Y))
    scrambled = SimpleNamespace(**vars(data))
    scrambled.Y = data.Y.copy()
    scrambled.Y[test] = scrambled.Y[test][:, ::-1]  # fold 1's test users: labels reversed
    _, again = run_experiment(config, scrambled)
    fold1 = again["chosen"]["fold"] == 1
    pd.testing.assert_frame_equal(again["chosen"][fold1], chosen[fold1])
    pd.testing.assert_frame_equal(again["tuning"][again["tuning"]["fold"] == 1],
                                  frames["tuning"][frames["tuning"]["fold"] == 1])


def test_the_settings_key_carries_the_protocol_and_the_grids(monkeypatch):
    base = LabelExperiment("mallows", (("n", 50),))
    params = base.params()
    assert params["protocol"] == label_runs.PROTOCOL >= 2  # AMM's hinge and the tuning
    assert params["lam_grid"] == list(label_runs.LAM_GRID)
    assert params["c_grid"] == list(label_runs.C_GRID) and params["tune_fraction"] == 0.2
    assert "lam" not in params and "lam_sweep" not in params
    keys = {base.task().key(),
            LabelExperiment("mallows", (("n", 50),), lam_grid=(1e-4,)).task().key(),
            LabelExperiment("mallows", (("n", 50),), c_grid=(1.0,)).task().key(),
            LabelExperiment("mallows", (("n", 50),), tune_fraction=0.3).task().key()}
    assert len(keys) == 4
    # the worker rebuilds the same settings from the stored parameters
    seen = {}
    monkeypatch.setattr(label_runs, "run_experiment",
                        lambda config, data, progress=None: seen.setdefault("config", config))
    label_runs.experiment_task(params, inputs={}, store=None, progress=None)
    assert seen["config"] == base


def test_defaults_cover_the_values_the_simulated_ad_clicks_choose():
    # λ: 1e-4 (BudgetedSVM) … 30, the held-out optimum at 1 … 10; C: 1e-3 … 1 (scikit-learn's
    # default), the optimum at 3e-3 … 0.03
    assert label_runs.LAM_GRID[0] == 1e-4 and {1.0, 3.0, 10.0} <= set(label_runs.LAM_GRID)
    assert max(label_runs.LAM_GRID) > 10.0
    assert min(label_runs.C_GRID) == 1e-3 and {3e-3, 0.01, 0.03} <= set(label_runs.C_GRID)
    assert max(label_runs.C_GRID) == 1.0
    assert label_runs.TUNED == {"AMM-rank": ("λ", "lam"), "AMM": ("λ", "lam"),
                                "LR": ("C", "C"), "PW-LR": ("C", "C")}


def test_progress_covers_the_tuning_fits_and_cancel_stops_inside_them():
    data = _data(n=120, seed=2)
    config = LabelExperiment(None, (), methods=("AMM-rank", "Central-Mal", "PW-LR"), n_folds=2,
                             lam_grid=(0.01, 1.0), c_grid=(0.1, 1.0), data_digest="x")
    calls = []
    run_experiment(config, data, progress=lambda fraction, text: calls.append((fraction, text)))
    fractions = [c[0] for c in calls]
    assert all(b >= a for a, b in zip(fractions, fractions[1:])) and fractions[-1] == 1.0
    assert 0 <= min(fractions)
    texts = " | ".join(c[1] for c in calls)
    for part in ("AMM-rank, all features, fold 1/2: tuning λ = 0.01",
                 "PW-LR, all features, fold 2/2: tuning C = 1",
                 "AMM-rank, all features, fold 2/2: λ = ", "Central-Mal, all features, fold 1/2"):
        assert part in texts
    # PW-LR reports inside its fit (one call per pair model): a cancel lands there
    inside = [c for c in calls if c[1].startswith("PW-LR, all features, fold 1/2: tuning C = 0.1")]
    assert len(inside) > 2

    class Cancelled(Exception):
        pass

    def cancel(fraction, text):
        if "tuning C" in text:
            raise Cancelled

    with pytest.raises(Cancelled):
        run_experiment(config, data, progress=cancel)


def test_fixed_grids_skip_the_tuning_and_tiny_training_sets_use_the_defaults():
    data = _data(n=60, seed=3)
    fixed = LabelExperiment(None, (), methods=("AMM-rank", "LR", "Central-Mal"), n_folds=2,
                            lam_grid=(1e-4,), c_grid=(1.0,), data_digest="x")
    _, frames = run_experiment(fixed, data)
    assert frames["tuning"].empty
    assert frames["chosen"][["method", "value", "how"]].values.tolist() == [
        ["AMM-rank", 1e-4, "fixed"]] * 2 + [["LR", 1.0, "fixed"]] * 2
    assert (frames["timing"]["tune_s"] == 0).all()
    from ui.label_ranking_view import chosen_table

    table = chosen_table(frames["chosen"])  # one value in all folds: one column, not two
    assert list(table.columns) == ["every fold"]
    assert table["every fold"].tolist() == ["λ = 0.0001 (fixed)", "C = 1 (fixed)"]
    # a held-out share that rounds to no user: the defaults, said in meta
    tiny = LabelExperiment(None, (), methods=("AMM-rank", "LR"), n_folds=2, tune_fraction=0.01,
                           data_digest="x")
    meta, frames = run_experiment(tiny, data)
    assert meta["tuning"]["folds_without_held_out"] == [1, 2] and frames["tuning"].empty
    assert frames["chosen"][["value", "how"]].values.tolist() == [
        [1e-4, "default"]] * 2 + [[1.0, "default"]] * 2


@pytest.mark.parametrize("change, match", [
    ({"lam_grid": ()}, r"lam_grid must hold one or more positive numbers; got \(\)"),
    ({"c_grid": (1.0, -1.0)}, r"c_grid must hold one or more positive numbers"),
    ({"tune_fraction": 1.0}, r"tune_fraction must be a number between 0 and 1 .*got 1\.0"),
])
def test_bad_tuning_settings_raise(change, match):
    config = LabelExperiment(None, (), methods=("LR",), n_folds=2, data_digest="x", **change)
    with pytest.raises(ValueError, match=match):
        run_experiment(config, _data(n=40))


def test_chosen_table_and_tuning_curves_for_the_page():
    from ui.label_ranking_view import chosen_table, timing_table, tuning_figure

    data = _data(n=120, seed=5)
    config = LabelExperiment(None, (), methods=("LR", "AMM-rank"), n_folds=2,
                             lam_grid=(0.01, 1.0), c_grid=(0.1, 1.0), data_digest="x")
    _, frames = run_experiment(config, data)
    table = chosen_table(frames["chosen"])
    assert [m for m, _ in table.index] == ["AMM-rank", "LR"]  # the page's method order
    assert list(table.columns) == ["fold 1", "fold 2"]
    assert all(v.startswith("λ = ") for v in table.loc[("AMM-rank", "all features")])
    fig = tuning_figure(frames["tuning"], "C")
    assert [t.name for t in fig.data] == ["LR, all features"]
    curve = frames["tuning"].query("method == 'LR'").groupby("value")["eps_dis"].mean()
    np.testing.assert_allclose(fig.data[0].y, curve.to_numpy())
    assert list(timing_table(frames["timing"]).columns) == ["tuning (ms)", "fit (ms)",
                                                            "predict (ms)"]
