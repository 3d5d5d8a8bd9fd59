"""Smoke tests: the benchmark scripts in bench/ still run end to end (tiny data, 5 trees).

They check that the scripts work, not their numbers: speed and accuracy live in bench/.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def paper_tables():
    return _load("paper_tables")


@pytest.fixture(scope="module")
def letor():
    return _load("letor")


def test_paired_splits_are_stratified_disjoint_and_reproducible(paper_tables, rng):
    y = (rng.random(1000) < 0.2).astype(np.int8)
    t = (rng.random(1000) < 0.5).astype(np.int8)
    splits = paper_tables.paired_splits(y, t, reps=3, seed=7)
    assert len(splits) == 3
    for train, test in splits:
        assert np.intersect1d(train, test).size == 0
        assert np.union1d(train, test).size == 1000
        assert test.size == 300
        for cell in range(4):  # (t, y) shares kept within a row of rounding
            share = np.mean((2 * t + y)[test] == cell)
            assert abs(share - np.mean(2 * t + y == cell)) < 0.01
    again = paper_tables.paired_splits(y, t, reps=3, seed=7)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits, again))
    assert not np.array_equal(splits[0][1], splits[1][1])


def test_every_table_row_has_a_paper_value(paper_tables):
    for number in ("6", "8", "9", "11"):
        table = paper_tables.row_table(number)
        for dataset in paper_tables.DATASETS:
            for row in table.rows:
                assert row.paper_key in table.paper[dataset], (number, dataset, row.label)
    for half in paper_tables.PAPER_T10.values():
        for dataset in paper_tables.DATASETS:
            assert set(half[dataset]) == set(paper_tables.TABLE10_K)
    specs = paper_tables.specs_for(paper_tables.TABLES, quick=False)
    assert len({s.key for s in specs}) == len(specs)  # shared models are fitted once


def test_paired_p_handles_identical_and_single_repetition(paper_tables):
    a = np.array([0.03, 0.031, 0.029])
    assert paper_tables.paired_p(a, a) == "identical"
    assert paper_tables.paired_p(a[:1], a[:1] + 1) == "n/a"
    assert paper_tables.paired_p(a, a + np.array([0.01, 0.012, 0.011])) != "n/a"


def test_paper_tables_runs_every_table(paper_tables, shared_data, tmp_path):
    out = tmp_path / "tables.md"
    text = paper_tables.main([
        "--reps", "2", "--trees", "5", "--forest-trees", "3", "--max-rows", "300",
        "--tables", "6,8,9,10,11", "--datasets", "hillstrom", "--data-dir", str(shared_data),
        "--out", str(out),
    ])
    assert out.read_text(encoding="utf-8") == text
    for number in ("6", "8", "9", "10", "11"):
        assert f"### Table {number} " in text
    assert paper_tables.CAVEAT in text
    assert "0.03055" in text  # the paper's Hillstrom PCG value sits beside ours
    assert "nan" not in text


def test_paper_tables_information_quick_subset(paper_tables, shared_data):
    text = paper_tables.main([
        "--quick", "--reps", "2", "--trees", "5", "--forest-trees", "3", "--max-rows", "300",
        "--datasets", "information", "--data-dir", str(shared_data),
    ])
    assert "### Table 11 " in text and "### Table 6 " in text
    assert "LambdaMART-MAP" not in text  # quick mode leaves the slow MAP out
    assert "0.02610 (+)" in text


def test_letor_runs(letor, shared_data):
    if not (shared_data / "mq2008_fold1").is_dir():
        pytest.skip("MQ2008 fold 1 is not in ../shared/data")
    text = letor.main(["--quick", "--max-queries", "20", "--data-dir", str(shared_data),
                       "--folds", "1", "--speed-reps", "1", "--speed-trees", "5"])
    for label in ("LambdaMART λ-AUC", "LambdaMART λ-MAUC", "LambdaMART λ-NDCG",
                  "LightGBM lambdarank (built-in)", "Linear pairwise AUC",
                  "Pointwise regression"):
        assert label in text
    assert "0.734" in text and "0.458" in text  # the paper's values beside ours
    assert "P@10" in text and "nan" not in text
    assert "Ratio of medians λ-MAUC / lambdarank" in text
    assert "### Paired per-query tests on MAUC" in text and "on MAUC (" in text
    split = letor.load_fold(1, shared_data, max_queries=5)["test"]
    assert split.n_queries == 5 and split.n_features == 46


def test_multiarm_bench_reports_both_outcomes(shared_data):
    from bench import multiarm

    text = multiarm.main(["--quick", "--max-rows", "3000", "--data-dir", str(shared_data)])
    assert "### visit: per-arm AUUC" in text and "### spend: per-arm AUUC" in text
    for label in ("LambdaMART-PCG per arm", "Two-model per arm (regression)",
                  "everyone: Mens E-Mail", "random arm"):
        assert label in text
    assert "nan" not in text


def test_scale_bench_measures_every_path(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("sklift")
    from bench import scale

    path = scale.ensure_file(tmp_path, 30_000)
    results = {mode: scale.child(mode, str(path), 2)
               for mode in ("parquet", "memory", "dask_exact", "dask_binned", "dask_boot")}
    assert results["parquet"]["table"] == results["memory"]["table"]
    assert results["dask_exact"]["table"] == results["memory"]["table"]
    assert results["dask_binned"]["bound"]["uplift_sep_rel"] > 0
    assert results["dask_boot"]["table"]["sd"]["AUUC@30%"] > 0
    assert all(r["seconds"] > 0 and r["peak_gb"] > 0 for r in results.values())
    ours, theirs = scale.curve_speed(20_000, repeats=1)
    assert ours > 0 and theirs > 0
    per_round = scale.train_rounds(20_000, 3, 1, block_rows=5_000)
    names = {"floor", "pcg", "pcg_blocks"}
    assert set(per_round) == names | {f"{name}_first" for name in names}
    assert all(seconds > 0 for seconds in per_round.values())


def test_scale_bench_trains_both_models_in_memory_and_on_a_cluster(tmp_path):
    pytest.importorskip("distributed")
    from bench import scale

    path = scale.ensure_file(tmp_path, 40_000)
    runs = {where: scale.train_child(where, str(path), 2, 5) for where in ("memory", "dask")}
    for r in runs.values():  # the same split: 7 of 10 partitions of 4,000 rows train
        assert (r["train_rows"], r["test_rows"], r["partitions"]) == (28_000, 12_000, 7)
        for name in scale.TRAIN_MODELS:
            assert r[name]["seconds"] > 0 and np.isfinite(r[name]["auuc30"])
            assert r[name]["corr_tau"] > 0  # even 5 trees lean towards the known effect
    assert runs["dask"]["cluster_gb"] > 0


def test_arm_balance_bench_scores_every_model_at_every_share():
    from bench import arm_balance

    text = arm_balance.main(["--rows", "1500", "--test-rows", "3000", "--rounds", "3",
                             "--seeds", "2"])
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    assert [r.split(" | ")[0][2:] for r in rows] == list(arm_balance.MODELS)
    assert all(r.count("ρ") == 3 for r in rows)
    tau = np.array([0.3, -0.1, 0.2, 0.0])  # by hand: ranked 0.3, 0.2, 0.0, −0.1
    assert arm_balance.true_auuc(tau, tau) == pytest.approx(
        np.mean([0.3, 0.5, 0.5, 0.4]) / 4)


def test_blocks_bench_runs_each_block_size():
    from bench import blocks

    from core.data import make_criteo_like

    d = make_criteo_like(6_000, random_state=0)
    res = blocks.run(d.X, d.y, d.t, [1_000, None], seeds=1, trees=5, lr=0.1)
    assert set(res) == {1_000, None} and all(len(v) == 1 for v in res.values())


def test_objective_profile_times_every_phase_and_restores_the_kernels(rng):
    pytest.importorskip("numba")
    from bench import objective_speed
    from core.objectives import _numba as kernels
    from core.objectives._plan import Plan

    x = rng.normal(size=(3_000, 4))
    rel = np.where(rng.random(3_000) < 0.1, 1.0, 0.0) - np.where(rng.random(3_000) < 0.05, 0.5, 0)
    base = {"metric": "None", "verbose": -1, "num_threads": 1, "learning_rate": 0.1,
            "num_leaves": 7, "deterministic": True, "seed": 0}
    sort, rows = Plan._sort_compiled, kernels.rows_signed
    phases = objective_speed.profile_rounds(x, rel, base, trees=5)
    assert Plan._sort_compiled is sort and kernels.rows_signed is rows  # timers removed
    assert {label for *_, label in objective_speed.PHASES} < set(phases)
    assert all(phases[label] > 0 for *_, label in objective_speed.PHASES)  # each one ran


def test_objective_bench_reports_the_fastest_of_its_repeats(shared_data, capsys, monkeypatch):
    """Every configuration runs --repeats times in rounds; the table shows the fastest."""
    from bench import objective_speed

    if not (shared_data / "hillstrom.csv").exists():
        pytest.skip("Hillstrom is not in ../shared/data")
    monkeypatch.setattr(objective_speed, "HILLSTROM", shared_data / "hillstrom.csv")
    seconds = iter([5.0, 1.0, 3.0, 2.0, 4.0, 6.0] * 20)
    real = objective_speed.train

    def fake_timed(params, x, label, group, trees):
        _, booster = real(params, x, label, group, trees)
        return next(seconds), booster

    monkeypatch.setattr(objective_speed, "train", fake_timed)
    objective_speed.main(["--trees", "2", "--repeats", "2", "--skip-exact",
                          "--subsample", "300"])
    out = capsys.readouterr()
    assert "fastest of 2 runs each" in out.out
    runs = [line for line in out.err.splitlines() if line.strip().startswith(("1/2", "2/2"))]
    assert len(runs) == 2 * 10  # 10 configurations, twice
    timed = [float(line.split()[-2]) for line in runs]
    lines = out.out.splitlines()
    floor = next(line for line in lines if line.startswith("| floor"))
    assert float(floor.split("|")[5]) == min(timed[0], timed[10])  # first run of each round
    outcome = next(line for line in lines if line.startswith("| outcome floor"))
    assert outcome.split("|")[4].strip() == "visit"  # it fits the outcome, not the Rel labels
    assert float(outcome.split("|")[5]) == min(timed[1], timed[11])
    # its × floor column: the two floors' ratio, the reference being the Rel floor
    assert float(outcome.split("|")[7]) == pytest.approx(
        min(timed[1], timed[11]) / min(timed[0], timed[10]), abs=0.006)
    targets = next(line for line in lines if line.startswith("Targets:"))
    pcg = next(line for line in lines if line.startswith("| PCG binned (ours)"))
    ratio = float(pcg.split("|")[5]) / float(outcome.split("|")[5])
    assert f"against the outcome floor {ratio:.2f}×" in targets


def test_objective_bench_model_row_trains_the_pcg_abs1_trees(rng):
    """The LambdaMARTUplift.fit row times the same training as the raw 'PCG binned, Abs1'
    row (one joint query, Abs1 labels, the same LightGBM settings): identical predictions."""
    from bench import objective_speed

    x = rng.normal(size=(1_500, 4))
    t = (rng.random(1_500) < 0.5).astype(np.int64)
    y = (rng.random(1_500) < 0.2 + 0.2 * t * (x[:, 0] > 0)).astype(np.int64)
    base = {"metric": "None", "verbose": -1, "num_threads": 1, "learning_rate": 0.1,
            "num_leaves": 7, "deterministic": True, "seed": 0}
    _, model = objective_speed.fit_model(base, x, y, t, trees=5)
    objective = objective_speed.lightgbm_objective("pcg", method="binned")
    _, raw = objective_speed.train({**base, "objective": objective}, x,
                                   objective_speed.labels(y, t, "abs1"), [len(y)], trees=5)
    np.testing.assert_array_equal(model.predict(x, raw_score=True),
                                  raw.predict(x, raw_score=True))
    assert model.num_trees() == 5


def test_objective_decomposition_replays_the_same_trees(rng, monkeypatch):
    """--decompose: LightGBM on PCG's recorded gradients builds the PCG training's trees, and
    the objective alone is timed on the recorded scores, once per round."""
    pytest.importorskip("numba")
    from bench import objective_speed

    x = rng.normal(size=(2_000, 4))
    rel = (rng.random(2_000) < 0.2).astype(float)
    base = {"metric": "None", "verbose": -1, "num_threads": 1, "learning_rate": 0.1,
            "num_leaves": 7, "deterministic": True, "seed": 0}
    boosters = []
    real = objective_speed.train

    def keep(params, xx, label, group, trees):
        out = real(params, xx, label, group, trees)
        boosters.append((params["objective"], out[1]))
        return out

    monkeypatch.setattr(objective_speed, "train", keep)
    ms = objective_speed.decompose(x, rel, base, trees=4, repeats=2)
    assert set(ms) == {"floor", "lightgbm", "objective"} and all(v > 0 for v in ms.values())
    recorded, *rest = boosters  # the PCG training, then (floor, replay) per repeat
    assert len(rest) == 4
    for _, booster in rest[1::2]:  # the replays: the PCG training's trees
        np.testing.assert_array_equal(booster.predict(x), recorded[1].predict(x))


def test_compare_sections_bench_times_every_section_of_the_page(capsys):
    """bench.compare_sections on a small stand-in: the test split is the last 30 % with two
    float32 scores, and every section of the Compare page is timed."""
    from bench import compare_sections

    split = compare_sections.test_split(10_000)
    assert split.y.size == 3_000 and all(s.dtype == np.float32 for s in split.scores.values())
    compare_sections.main(["--rows", "10000", "--boot", "3"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    labels = [line.split("|")[1].strip() for line in rows[1:]]
    assert labels == ["curves and bands", "AUUC table", "definition ranks", "P-nDCG / nDCG",
                      "deciles", "profit bootstrap (200 replicates)",
                      "AUUC bootstrap (3 replicates, its set-up included)"]
    assert all(float(line.split("|")[2]) >= 0 for line in rows[1:])
    assert "3,000 test rows (of a 10,000-row stand-in)" in out


@pytest.mark.parametrize("name", ["app_latency", "arm_balance", "blocks", "compare_sections",
                                  "curves", "interleaving", "objective_speed", "scale", "letor"])
def test_help_says_what_the_bench_measures_in_whole_sentences(name, monkeypatch, capsys):
    """``--help`` shows the docstring's first paragraph (the first line alone stopped
    mid-sentence: "… from Parquet, in"); in this process (each bench's ``main`` reads
    ``sys.argv``), one bench through ``python -m`` below."""
    mod = importlib.import_module(f"bench.{name}")
    first = mod.__doc__.split("\n\n")[0]
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as stop:
        mod.main()
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert first in out and first.rstrip().endswith((".", ")", "`"))


def test_a_bench_help_through_python_dash_m():
    """The entry point people type: ``python -m bench.scale --help``."""
    out = subprocess.run([sys.executable, "-m", "bench.scale", "--help"], cwd=BENCH.parent,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Criteo-size experiments" in out.stdout
