"""ui.charts: stable run colours, short legend names with the full name in the hover,
definition titles and axis titles with units on every figure, optional bands and ranges."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_words import UNIT

from core.evaluation.curve_tables import PERFECT, RANDOM
from core.evaluation.curves import DEFINITIONS
from ui.charts import (
    PALETTE,
    band_figure,
    curve_figure,
    decile_figure,
    definitions_grid,
    profit_figure,
    run_colors,
    shared_parts,
    short_name,
    short_names,
)

ROOT = Path(__file__).resolve().parents[1]
LONG = "LambdaMART-PCG@30% (joint, rel) · 500 trees · 5 splits · seed 0"
LONG2 = "LambdaMART-PCG@30% (sep, abs) · 500 trees · 5 splits · seed 0"
IDS = [f"run-{i:03d}" for i in range(40)]


# ----------------------------------------------------------------------- colours
def test_palette_is_ten_distinct_colours_without_the_baseline_greys():
    assert len(PALETTE) >= 10 and len(set(PALETTE)) == len(PALETTE)
    for color in PALETTE:
        r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
        assert max(r, g, b) - min(r, g, b) > 40, f"{color} is a grey (baselines are grey/black)"


def test_palette_neighbours_contrast():
    # a hashed colour already taken falls to the next one: neighbours must not look alike
    # (RGB distance; the former order put sand #DDCC77 beside olive #999933: 109)
    def rgb(c):
        return np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)

    for a, b in zip(PALETTE, PALETTE[1:] + PALETTE[:1]):
        assert np.linalg.norm(rgb(a) - rgb(b)) > 140, (a, b)


def test_run_colors_do_not_depend_on_order():
    ids = IDS[:12]
    reference = run_colors(ids)
    rng = np.random.default_rng(0)
    for _ in range(20):
        shuffled = list(rng.permutation(ids))
        assert run_colors(shuffled) == reference
    assert list(run_colors(ids[::-1])) == ids[::-1]  # keys in the order given


def test_run_colors_do_not_depend_on_the_other_runs_selected():
    # A run shown alone has its own colour; in any subset whose own colours differ, every
    # run keeps it (the colour is a function of the id, not of the position or the set).
    own = {rid: run_colors([rid])[rid] for rid in IDS}
    free = []
    for rid in IDS:  # a greedy set of runs whose own colours are all different
        if own[rid] not in {own[f] for f in free}:
            free.append(rid)
    assert len(free) >= 5
    for k in (1, 2, 3, len(free)):
        for subset in itertools.islice(itertools.combinations(free, k), 30):
            assert run_colors(list(subset)) == {rid: own[rid] for rid in subset}


def test_run_colors_never_repeat_within_the_palette_size():
    rng = np.random.default_rng(1)
    for size in range(2, len(PALETTE) + 1):
        for _ in range(25):
            chosen = list(rng.choice(IDS, size=size, replace=False))
            colors = run_colors(chosen)
            assert len(set(colors.values())) == size, colors
            assert set(colors.values()) <= set(PALETTE)


def test_run_colors_resolve_a_collision_deterministically():
    own = {rid: run_colors([rid])[rid] for rid in IDS}
    a, b = next((x, y) for x, y in itertools.combinations(IDS, 2) if own[x] == own[y])
    pair, swapped = run_colors([a, b]), run_colors([b, a])
    assert pair == swapped and pair[a] != pair[b]
    assert own[a] in pair.values()  # one of them keeps the colour, the other moves on


def test_run_colors_do_not_use_pythons_salted_hash():
    code = "from ui.charts import run_colors; print(run_colors(['a', 'bb', 'run-7']))"
    outs = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                           text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2", "3")}
    assert len(outs) == 1


# ------------------------------------------------------------------------- names
@pytest.mark.parametrize("label", ["", "LightGBM", "Random targeting", "x" * 32])
def test_short_name_keeps_short_labels(label):
    assert short_name(label) == label


def test_short_name_fits_and_shows_the_cut():
    rng = np.random.default_rng(2)
    words = ["LambdaMART", "PCG@30%", "(joint,", "rel)", "·", "500", "trees", "holdout",
             "seed", "#1a2b3c", "abcdefghijklmnopqrstuvwxyz0123456789"]
    for _ in range(300):
        label = " ".join(rng.choice(words, size=rng.integers(1, 15)))
        for max_len in (8, 12, 20, 32, 48):
            for tail in (0.0, 1 / 3, 2 / 3):
                out = short_name(label, max_len, tail=tail)
                assert len(out) <= max_len, (label, max_len, out)
                if len(label) > max_len:
                    assert "…" in out
                    assert label.startswith(out.split("…")[0].rstrip())


def test_names_leave_out_the_parts_every_run_shares_and_keep_what_tells_them_apart():
    two = ["Transformed outcome · 100 trees · one 70/30 split · seed 0",
           "Flipped label · 100 trees · one 70/30 split · seed 0", RANDOM, PERFECT]
    assert shared_parts(two) == ["100 trees", "one 70/30 split", "seed 0"]
    assert list(short_names(two, drop_shared=True).values()) == [
        "Transformed outcome", "Flipped label", RANDOM, PERFECT]
    budgets = ["Two-model · 500 trees · 3 splits · seed 0", "Two-model · 100 trees · 3 splits"
               " · seed 0"]
    assert list(short_names(budgets, drop_shared=True).values()) == [
        "Two-model · 500 trees", "Two-model · 100 trees"]
    assert shared_parts([RANDOM, PERFECT]) == []  # baselines: nothing to leave out
    assert short_names([LONG], drop_shared=True) == {LONG: "LambdaMART-PCG@30% (joint, rel)"}
    assert short_names(two)[two[0]] == short_name(two[0])  # without drop_shared: as before


def test_short_name_examples():
    assert short_name(LONG) == "LambdaMART-PCG@30% (joint, rel)…"
    assert short_name(LONG + " · #1a2b3c", tail=1 / 3) == "LambdaMART-PCG@30% … #1a2b3c"


@pytest.mark.parametrize("bad", [0, 7, 10.5, True])
def test_short_name_rejects_a_tiny_max_len(bad):
    with pytest.raises(ValueError, match="max_len must be an integer of at least 8; got"):
        short_name(LONG, bad)


def test_short_names_tell_like_named_runs_apart():
    labels = [f"{LONG} · #{rid}" for rid in ("1a2b3c", "9f8e7d")] + [LONG2, "x" * 80, "x" * 81]
    shorts = short_names(labels)
    assert len(set(shorts.values())) == len(labels)
    assert all(len(s) <= 32 for s in shorts.values())
    assert shorts[LONG2] == short_name(LONG2)  # no clash: plain cut
    assert shorts[f"{LONG} · #1a2b3c"].endswith("#1a2b3c")


# ----------------------------------------------------------------------- figures
def _traces_named(fig, full):
    return [t for t in fig.data if t.meta is not None and t.meta[0] == full and t.showlegend
            is not False]


#: Legends leave out what every run's name holds (" · 500 trees · 5 splits · seed 0").
LEGEND = {LONG: "LambdaMART-PCG@30% (joint, rel)", LONG2: "LambdaMART-PCG@30% (sep, abs)"}


def _assert_words(fig, full, color=None):
    (trace,) = _traces_named(fig, full)
    assert trace.name == LEGEND[full] != full
    assert trace.legendgroup == full
    assert "%{meta[0]}" in trace.hovertemplate
    if color is not None:
        assert trace.line.color == color


def _curve_frame():
    x = np.linspace(0, 1, 11)
    return pd.concat([pd.DataFrame({"ranker": name, "fraction": x, "targeted": x * 100,
                                    "value": v}) for name, v in
                      ((LONG, np.sqrt(x) * 0.03), (RANDOM, x * 0.03), (PERFECT, 0.05 * x ** .2))],
                     ignore_index=True)


def test_curve_figure_words_colours_baselines_and_title():
    fig = curve_figure(_curve_frame(), definition="uplift_sep_rel", colors={LONG: "#123456",
                                                                              RANDOM: "#ff0000"})
    _assert_words(fig, LONG, "#123456")
    by_name = {t.name: t for t in fig.data}
    assert by_name[RANDOM].line.color == "grey" and by_name[RANDOM].line.dash == "dash"
    assert by_name[PERFECT].line.color == "black" and by_name[PERFECT].line.dash == "dot"
    title = fig.layout.title.text
    assert title.startswith("Uplift curve, separate, relative ")
    assert "font-size:0.75em" in title and "(uplift_sep_rel)" in title
    assert fig.layout.xaxis.title.text == "share targeted (%)"
    assert "share of arm" in fig.layout.yaxis.title.text
    assert "%{y:.5f}" in fig.data[0].hovertemplate  # shares of an arm: 5 decimals
    rows = curve_figure(_curve_frame(), definition="qini_sep_abs", x="targeted")
    assert "count" in rows.layout.xaxis.title.text
    assert "responders" in rows.layout.yaxis.title.text
    assert "%{y:,.1f}" in rows.data[0].hovertemplate  # responders: 1 decimal, thousands


def test_band_figure_words_and_colours():
    x = np.linspace(0, 1, 5)
    bands = {LONG: (x, x * 0.9, x, x * 1.1), LONG2: (x, x, x, x)}
    colors = {LONG: "#abcdef", LONG2: "#fedcba"}
    fig = band_figure(bands, definition="qini_joint_abs", colors=colors)
    _assert_words(fig, LONG, "#abcdef")
    _assert_words(fig, LONG2, "#fedcba")
    fills = [t for t in fig.data if t.fill == "toself"]
    assert len(fills) == 1 and fills[0].legendgroup == LONG  # no band where low == high
    assert "responders" in fig.layout.yaxis.title.text
    assert "(qini_joint_abs)" in fig.layout.title.text
    # the old call still works, colours then come from the names
    plain = band_figure(bands, definition="qini_joint_abs")
    assert {t.line.color for t in plain.data if t.mode == "lines"} <= set(PALETTE)


def _profit_frames():
    x = np.linspace(0, 1, 21)
    profit = 100 * x * (1 - x) - 5 * x          # best at x = 0.475 → grid point 0.45 / 0.5
    return {LONG: pd.DataFrame({"fraction": x, "profit": profit, "low": profit - 3,
                                "high": profit + 3}),
            LONG2: pd.DataFrame({"fraction": x, "profit": profit / 2})}


def test_profit_figure_band_equivalent_range_and_words():
    frames = _profit_frames()
    fig = profit_figure(frames, colors={LONG: "#332288"}, equivalent={LONG: (0.3, 0.6)})
    _assert_words(fig, LONG, "#332288")
    _assert_words(fig, LONG2)
    fills = [t for t in fig.data if t.fill == "toself"]
    assert len(fills) == 1 and fills[0].legendgroup == LONG
    np.testing.assert_allclose(sorted(fills[0].y), sorted(np.r_[frames[LONG]["low"],
                                                                frames[LONG]["high"]]))
    best = frames[LONG]["profit"].max()
    (segment,) = [t for t in fig.data if t.mode == "lines" and t.line.width
                  and t.line.width >= 8]
    assert list(segment.x) == [0.3, 0.6] and list(segment.y) == [best, best]
    assert segment.line.color.startswith("rgba(51,34,136,")  # the run's colour, translucent
    markers = [t for t in fig.data if t.mode == "markers"]
    assert sorted(m.y[0] for m in markers) == sorted([best, best / 2])
    assert fig.layout.xaxis.title.text == "share targeted (%)"
    assert "profit" in fig.layout.yaxis.title.text
    profit_figure({"a": frames[LONG2]})  # the old call still works


def test_decile_figure_prefers_low_high_and_shows_the_note():
    table = pd.DataFrame({"bin": [1, 2, 3], "n": [1000, 1000, 1000],
                          "uplift": [0.05, 0.02, -0.01], "low": [0.03, 0.0, -0.02],
                          "high": [0.08, 0.03, 0.01], "ci_low": [0.0] * 3, "ci_high": [0.1] * 3})
    fig = decile_figure(table, title="Run A", note="mean over 3 splits, bars = min–max",
                        color="#117733")
    bar = fig.data[0]
    # a difference of rates in percentage points (0.05 → 5 pp), as the Data page's effect
    np.testing.assert_allclose(bar.y, [5.0, 2.0, -1.0])
    np.testing.assert_allclose(bar.error_y.array, [3.0, 1.0, 2.0])
    np.testing.assert_allclose(bar.error_y.arrayminus, [2.0, 2.0, 1.0])
    assert bar.marker.color == "#117733"
    assert fig.layout.title.subtitle.text == "mean over 3 splits, bars = min–max"
    assert fig.layout.yaxis.title.text == "uplift: response rate T − C (percentage points)"
    assert fig.layout.yaxis.ticksuffix == " pp" and "decile" in fig.layout.xaxis.title.text
    old = decile_figure(table.drop(columns=["low", "high"]), title="Run A")
    np.testing.assert_allclose(old.data[0].error_y.array, [5.0, 8.0, 11.0])
    assert old.layout.title.subtitle.text.startswith("bars:")


def test_decile_charts_of_several_runs_share_one_y_range():
    from ui.charts import share_decile_range

    a = pd.DataFrame({"bin": [1, 2], "uplift": [0.10, 0.0], "low": [0.08, -0.02],
                      "high": [0.12, 0.01]})
    b = pd.DataFrame({"bin": [1, 2], "uplift": [0.03, -0.01], "low": [0.01, -0.04],
                      "high": [0.05, 0.02]})
    figs = [decile_figure(t, title=n) for n, t in (("A", a), ("B", b))]
    share_decile_range(figs, pad=0.05)
    lo, hi = -4.0, 12.0  # pp: the lowest bar end (B's -0.04) and the highest (A's 0.12)
    for fig in figs:
        np.testing.assert_allclose(fig.layout.yaxis.range, [lo - 0.8, hi + 0.8])


def test_definitions_grid_titles_and_axis_units_on_every_panel():
    x = np.linspace(0, 1, 5)
    frames = {d: pd.concat([pd.DataFrame({"scenario": s, "ranker": r, "fraction": x, "value": x})
                            for s in ("|T| = |C|", "|T| = 9|C|") for r in ("ranking", RANDOM)])
              for d in DEFINITIONS}
    fig = definitions_grid(frames)
    layout = json.loads(fig.to_json())["layout"]
    titles = [a["text"] for a in layout["annotations"]]
    for i, name in enumerate(DEFINITIONS):
        assert titles[i].startswith(DEFINITIONS[name].title) and f"({name})" in titles[i]
        suffix = "" if i == 0 else str(i + 1)
        assert layout[f"xaxis{suffix}"]["title"]["text"] == "share targeted (%)"
        # the unit read off the formula (uplift joint absolute: the top's rate difference
        # times the rows targeted, not a count of responders)
        assert UNIT[name] in layout[f"yaxis{suffix}"]["title"]["text"], name
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == ["|T| = |C|", "|T| = |C| (random)", "|T| = 9|C|", "|T| = 9|C| (random)"]


def test_label_width_fits_the_longest_label_within_its_bounds():
    from ui.charts import label_width

    # 38 characters: 7.5 · 38 + 24 = 309 px
    assert label_width(["Flipped label", "LambdaMART-PCG (separate, Abs1 labels)"]) == 309
    assert label_width(["Random ranker (seed 0)"]) == 189  # 7.5 · 22 + 24 = 189
    assert label_width(["Transformed outcome"]) == 166  # 7.5 · 19 + 24 = 166.5, whole pixels
    assert label_width(["f0", "f11"]) == 100  # the least
    assert label_width(["x" * 80]) == 340  # the most
    assert label_width([], least=200) == 200
