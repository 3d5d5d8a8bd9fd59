"""Real-browser test: Debian's Chromium driven by Playwright against a running app.

Starts ``streamlit run app.py`` on a free loopback port, uploads a CSV, trains a small model
in the background and sees its curve on the Compare page.  Needs ``/usr/bin/chromium``
(``.ci/run`` installs it); skipped when it is absent — except in CI (``CI=true``), where a
missing browser is a failure, so the test can never silently not run there.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = pytest.mark.browser
#: st.error boxes (ui.common.guard shows every failure as one) and uncaught exceptions
ERRORS = '[data-testid="stAlertContentError"], [data-testid="stException"]'


def _require_browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("Chromium is not installed: .ci/run should have installed it")
        pytest.skip("Chromium not installed (apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api")


def _assert_clean(page, where: str) -> None:
    errors = page.locator(ERRORS)
    assert errors.count() == 0, f"{where}: " + " | ".join(errors.all_inner_texts())


def _launch(playwright):
    """Debian's Chromium, headless, without the background connections this closed network
    refuses."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def app_url(tmp_path):
    port = _free_port()
    env = {**os.environ, "UPRANK_RUNS_DIR": str(tmp_path / "runs"),
           "UPRANK_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the app did not start within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _csv(path: Path) -> Path:
    rng = np.random.default_rng(7)
    n = 2000
    t = rng.integers(0, 2, n)
    x = rng.normal(size=n)
    y = (rng.random(n) < 0.15 + 0.1 * t * (x > 0)).astype(int)
    lines = ["group;bought;x;age"] + [f"{'test' if a else 'control'};{'yes' if b else 'no'};"
                                      f"{c:.4f};{rng.integers(18, 80)}"
                                      for a, b, c in zip(t, y, x)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_upload_train_and_see_a_curve(app_url, tmp_path):
    sync_api = _require_browser()
    csv = _csv(tmp_path / "campaign.csv")
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(app_url)
        page.get_by_text("Upload an A/B CSV").click()
        page.locator("input[type=file]").set_input_files(str(csv))
        page.get_by_role("button", name="Use this CSV").click()
        page.get_by_text("Current dataset: campaign").wait_for()
        _assert_clean(page, "Data page")

        page.get_by_role("link", name="Train", exact=True).click()
        page.get_by_role("button", name="Train", exact=True).click()
        page.get_by_text("Trained in").first.wait_for(timeout=180_000)
        page.get_by_text("Trained in").nth(1).wait_for(timeout=180_000)
        _assert_clean(page, "Train page")

        page.get_by_role("link", name="Compare", exact=True).click()
        page.locator(".js-plotly-plot").first.wait_for()
        page.get_by_text("AUUC on the test rows").wait_for()
        assert page.locator(".js-plotly-plot").count() >= 2  # curves + profit
        _assert_clean(page, "Compare page")
        page.screenshot(path=str(tmp_path / "compare.png"))
        browser.close()


def test_hillstrom_survives_a_reload_then_three_split_runs_and_a_report(app_url, tmp_path,
                                                                        shared_data):
    """The issue's user path: Data (Hillstrom) → reload → still Hillstrom → Train two quick
    runs with 3 repeated splits → Compare shows the spread over splits → the report."""
    sync_api = _require_browser()
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000},
                                accept_downloads=True)
        page.set_default_timeout(60_000)
        # A shared link to a page, the first request this fresh server sees: the app's own
        # navigation (not Streamlit's file-name list) and the linked dataset.
        page.goto(f"{app_url}/curves?dataset=hillstrom&arm=womens&outcome=visit")
        page.get_by_text("Dataset: Hillstrom").first.wait_for()
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.get_by_text("Glossary").wait_for()
        assert nav.get_by_role("link", name="app", exact=True).count() == 0
        _assert_clean(page, "Curves page opened by a link")

        page.goto(app_url)
        page.get_by_role("combobox", name="Dataset").first.click()
        page.get_by_role("option", name="Hillstrom e-mail test (MineThatData, 2008)").click()
        page.get_by_role("button", name="Use this dataset").click()
        page.get_by_text("Current dataset: Hillstrom").wait_for()
        _assert_clean(page, "Data page")

        page.reload()  # a reload keeps the dataset (it is in the URL)
        page.get_by_text("Current dataset: Hillstrom").wait_for()
        _assert_clean(page, "Data page after a reload")

        page.get_by_role("link", name="Train", exact=True).click()
        page.get_by_text("Dataset: Hillstrom").first.wait_for()
        page.get_by_text("repeated splits").click()
        repeats = page.get_by_role("spinbutton", name="Repetitions")
        sync_api.expect(repeats).to_be_enabled()  # the click's rerun has enabled it
        repeats.fill("3")
        repeats.press("Enter")
        sync_api.expect(repeats).to_have_value("3")
        page.wait_for_timeout(1000)
        page.get_by_role("button", name="Train", exact=True).click()
        page.get_by_text("Trained in").first.wait_for(timeout=300_000)
        page.get_by_text("Trained in").nth(1).wait_for(timeout=300_000)
        _assert_clean(page, "Train page")

        page.get_by_role("link", name="Compare", exact=True).click()
        page.get_by_text("Over 3 repeated splits: mean ± sd").wait_for()
        table = page.locator('[data-testid="stDataFrame"]').first
        table.wait_for()
        _assert_clean(page, "Compare page")
        page.screenshot(path=str(tmp_path / "compare.png"))

        with page.expect_download(timeout=180_000) as download:
            page.get_by_role("button", name="Report (one HTML file)").click()
        report = Path(download.value.path()).read_text(encoding="utf-8")
        for heading in ("Takeaway", "Dataset", "AUUC with intervals", "Run configurations"):
            assert f">{heading}</h2>" in report, heading
        assert "over 3 repeated splits" in report
        assert "leads" in report or "not distinguishable" in report
        browser.close()


def test_ranking_lab_trains_two_rankers_on_mq2008_and_reaches_a_verdict(app_url, tmp_path,
                                                                        shared_data):
    """Ranking lab: MQ2008 fold 1 (the default) → train λ-MAUC LambdaMART and the linear
    pairwise AUC baseline in the background → per-query comparison with the paired-test
    verdict → a query's documents in each run's order → the P-nDCG explorer's example."""
    if not (shared_data / "mq2008_fold1").is_dir():
        pytest.skip("MQ2008 fold 1 is not in ../shared/data")
    sync_api = _require_browser()
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(app_url)
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.get_by_role("link", name="Ranking data", exact=True).click()
        page.get_by_text("LETOR 4.0 MQ2008, fold 1").first.wait_for()
        page.get_by_text("Documents per query").first.wait_for()
        _assert_clean(page, "Ranking data page")
        # A malformed upload: one message naming the line, nothing lost, no exception.
        bad = tmp_path / "bad.txt"
        bad.write_bytes(b"2 qid:1 1:0.5 # docid = A\n0 qid:1 1:0.1 # docid = B\n"
                        b"x qid:2 1:0.3\n1 qid:2 1:0.2\n")
        page.get_by_text("Upload a file").click()
        page.locator("input[type=file]").set_input_files(str(bad))
        page.get_by_text("line 3: the relevance label 'x' is not a number").wait_for()
        page.get_by_text("The Ranking lab still uses").wait_for()
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator(ERRORS).count() == 1
        page.get_by_text("LETOR 4.0 MQ2008 (web search").click()  # back to the benchmark
        page.get_by_text("Documents per query").first.wait_for()

        nav.get_by_role("link", name="Ranking runs", exact=True).click()
        page.get_by_role("button", name="Train", exact=True).click()
        page.get_by_text("Trained in").first.wait_for(timeout=180_000)
        page.get_by_text("Trained in").nth(1).wait_for(timeout=180_000)
        page.get_by_text("Trained runs on this dataset").wait_for()
        _assert_clean(page, "Ranking runs page")

        nav.get_by_role("link", name="Ranking compare", exact=True).click()
        page.get_by_text("Paired per-query tests").wait_for()
        verdict = page.get_by_text("on MAUC (").first
        verdict.wait_for()
        text = verdict.inner_text()
        assert "beats" in text or "No significant difference" in text
        assert "156 queries" in text or "105 queries" in text or "queries" in text
        page.get_by_text("Query explorer").wait_for()
        _assert_clean(page, "Ranking compare page")
        page.screenshot(path=str(tmp_path / "ranking_compare.png"), full_page=True)

        nav.get_by_role("link", name="P-nDCG explorer", exact=True).click()
        page.get_by_text("nDCG of the list under each discount").wait_for()
        page.get_by_text("0.588").first.wait_for()
        _assert_clean(page, "P-nDCG explorer")
        browser.close()


def test_several_arms_on_hillstrom_reaches_policies_qini_and_calibration(app_url, tmp_path,
                                                                         shared_data):
    """Hillstrom's three arms: the Data page shows every arm, per-arm models train from the
    Train page, Compare shows the policy table, the multi-armed Qini curve and calibration,
    and the run's report downloads — with no error on any page."""
    sync_api = _require_browser()
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(app_url + "/?dataset=hillstrom_arms&outcome=visit")
        page.get_by_text("χ² test of the arm counts against the design").wait_for()
        page.get_by_text("Covariate balance of each arm vs control").wait_for()
        _assert_clean(page, "Data page, three arms")
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.get_by_role("link", name="Train", exact=True).click()
        page.get_by_role("button", name="Train per arm", exact=True).click()
        # queued before leaving: a page switch during the click's rerun would drop the click,
        # and Compare watches only the per-arm jobs that exist when it is drawn
        page.get_by_text(re.compile(r" — (queued|running|done)$")).first.wait_for()
        nav.get_by_role("link", name="Compare", exact=True).click()
        page.get_by_text("Policies: value per customer").wait_for(timeout=180_000)
        page.get_by_text("Multi-armed Qini curve").first.wait_for()
        page.get_by_text("Calibration slope (1 = the predicted uplift").wait_for()
        _assert_clean(page, "Compare page, several arms")
        with page.expect_download() as download:
            page.get_by_role("button", name="Report of this run (one HTML file)").click()
        html = Path(download.value.path()).read_text(encoding="utf-8")
        assert "best-arm rule" in html and "Mens E-Mail" in html
        page.screenshot(path=str(tmp_path / "several_arms.png"), full_page=True)
        browser.close()


def test_large_file_by_path_trains_in_the_background_and_cancels(app_url, tmp_path):
    """The Criteo-size path at a test's size: a Parquet file named in a shared link, read by
    path (never uploaded); LambdaMART trains as a background job whose round count shows,
    another page opens while it runs, and Cancel stops it with nothing stored."""
    sync_api = _require_browser()
    from core.data import write_criteo_like

    path = tmp_path / "criteo_like.parquet"
    write_criteo_like(path, 300_000, random_state=0)
    link = f"file={path}&file_treatment=treatment&file_outcome=visit"
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(f"{app_url}/train?{link}")
        page.get_by_text("Dataset: criteo_like.parquet · 300,000 rows").wait_for()
        # the paper's budget on 20 repeated splits: ~20 x 14 s of training here, so the jobs
        # still run when Cancel comes on any machine (one split ended before a slow machine
        # had drawn the Train page again: no Cancel button was left to click)
        page.get_by_text("as in the paper (500 trees, lr 0.01)").click()
        page.get_by_text("repeated splits").click()
        repetitions = page.get_by_role("spinbutton", name="Repetitions")
        sync_api.expect(repetitions).to_be_enabled()
        repetitions.fill("20")
        repetitions.press("Enter")
        sync_api.expect(repetitions).to_have_value("20")
        page.wait_for_timeout(1000)
        page.get_by_role("button", name="Train", exact=True).click()
        # "split 1/20, round 3/500, …": a job is running (a plain "round " would also match
        # the Budget's "100 rounds" at once, and the page switch below could drop the click)
        page.get_by_text(re.compile(r"round \d+/500")).first.wait_for(timeout=120_000)
        _assert_clean(page, "Train page while training")

        page.get_by_role("link", name="Glossary", exact=True).click()  # responsive meanwhile
        page.get_by_role("heading", name="Glossary").wait_for()
        page.get_by_role("link", name="Train", exact=True).click()
        cancel = page.get_by_role("button", name="Cancel", disabled=False)  # not "Cancelling"
        cancel.first.click()
        page.get_by_text("Cancelled — nothing was stored.").first.wait_for(timeout=30_000)
        _assert_clean(page, "Train page after Cancel")
        while cancel.count():  # the other model's job too: nothing left running
            cancel.first.click()
            page.wait_for_timeout(1500)
        sync_api.expect(page.get_by_text("Cancelled — nothing was stored.")).to_have_count(
            2, timeout=60_000)
        page.screenshot(path=str(tmp_path / "cancelled.png"))
        browser.close()


#: Widget texts the browser cuts off: a choice's text wider than its box (a selectbox value, a
#: multiselect tag) or a tag pushed beyond the widget's right edge, a text input's or a
#: selectbox's value, a metric's label or a button's label wider than its field.  Returns the
#: texts cut off and how many choice texts and fields were measured (a selector that no longer
#: matches Streamlit's markup must not pass as "nothing cut off").
CLIPPED = """() => {
  const out = [];
  let choices = 0, fields = 0;
  for (const w of document.querySelectorAll(
      '[data-testid="stMultiSelect"], [data-testid="stSelectbox"]')) {
    const box = w.querySelector('.react-aria-ComboBox, [data-baseweb="select"]') || w;
    const right = box.getBoundingClientRect().right;
    for (const e of box.querySelectorAll('span, div')) {
      if (e.children.length || !e.textContent.trim()) continue;
      choices += 1;
      if (e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > right + 1)
        out.push(w.innerText.split('\\n')[0] + ': ' + e.textContent.trim());
    }
  }
  for (const e of document.querySelectorAll(
      '[data-testid="stTextInput"] input, [data-testid="stSelectbox"] input, ' +
      '[data-testid="stMetricLabel"] p, button p')) {
    fields += 1;
    if (e.scrollWidth > e.clientWidth + 1) out.push(e.value || e.textContent);
  }
  return {clipped: out, choices: choices, fields: fields};
}"""


def test_settings_read_whole_in_a_laptop_window(app_url):
    """At 1000 px (a laptop beside the sidebar) no model name, method, objective or label set
    of the pages with most settings is cut off (the Train page's second model was hidden and
    its λ-objective read "PCG (uplift-")."""
    sync_api = _require_browser()
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        page.set_default_timeout(60_000)
        for path, ready in [("train", "Train"), ("interleaving", "Run simulation"),
                            ("label_ranking", "Run experiment"), ("curves", None),
                            ("definitions", None)]:
            page.goto(f"{app_url}/{path}")
            if ready is None:  # a page of charts: ready when its first chart is drawn
                page.locator(".js-plotly-plot").first.wait_for()
            else:
                page.get_by_role("button", name=ready, exact=True).wait_for()
            page.wait_for_timeout(1500)  # widths settle after the first paint
            measured = page.evaluate(CLIPPED)
            assert measured["clipped"] == [], path
            assert measured["fields"] > 0, f"{path}: no field measured (markup changed?)"
            if path == "train":  # the two model tags; the two selects' values are fields
                assert measured["choices"] >= 2 and measured["fields"] >= 3, measured
            _assert_clean(page, path)
        browser.close()
