"""Plain-words explanations of the terms on UpRank's screens, written once.

Pages pass them as ``help=`` tooltips (``help=GLOSSARY["AUUC"]``) and the Glossary page lists
them all, so a stakeholder reads the same sentence wherever a term appears.
"""

from __future__ import annotations

GLOSSARY: dict[str, str] = {
    "Uplift": "The extra response caused by the treatment: response rate if treated minus "
              "response rate if not. It is never seen for one person; an A/B test estimates it "
              "for groups.",
    "Ranker": "Any score that orders customers from 'treat first' to 'treat last': an uplift "
              "model, a score column of the data, or a random order.",
    "Uplift curve": "Cumulative uplift when targeting the top x % of a ranking (treated "
                    "responders minus control responders, per definition). A good ranker rises "
                    "fast, above the straight line of random targeting.",
    "Qini curve": "The uplift curve in absolute numbers of incremental responders (Radcliffe "
                  "2007): the control responders are scaled to the treated group's size — "
                  "by the arms' sizes in the separate Qini, by the arms' shares among the "
                  "top k rows in the joint Qini (Devriendt et al. 2020, eq. 13).",
    "AUUC": "Area under the uplift curve up to the cut-off, with depth running from 0 to 1: "
            "the curve's heights summed over the depths up to the cut-off, divided by the "
            "number of depths in the whole list (paper's mean convention) — so AUUC@30 % is "
            "the average height over 0–30 % times 0.3. Higher is better; compare it with the "
            "random ranker's area, on the same definition and cut-off only.",
    "Cut-off": "Targeting depth: the share of the ranking that is treated, e.g. 30 % = the top "
               "30 % of customers. AUUC@30 % sums the curve up to that depth.",
    "Definition": "The literature computes the uplift curve in six ways (Devriendt et al. "
                  "2020, Table 2): joint or separate ranking, absolute or relative units, "
                  "Qini or uplift. The separate relative definition is the one that is not "
                  "moved by the arm sizes; joint curves shift when the arms differ in size.",
    "Joint / separate": "Joint: treated and control customers ranked together and the top k "
                        "rows counted. Separate: each arm ranked on its own and the top p % of "
                        "each arm compared.",
    "Absolute / relative": "Absolute: counts of responders (scale with the arm sizes). "
                           "Relative: response rates (shares of each arm), comparable across "
                           "experiments with different arm splits.",
    "TR / TN / CR / CN": "Treated responder, treated non-responder, control responder, control "
                         "non-responder: the four kinds of rows of an A/B test (the paper's "
                         "§4.2 writes the non-responders TNR and CNR).",
    "Two-model": "A baseline uplift model (Hansotia & Rukstales 2002): one model of the "
                 "response of the treated, one of the control customers; the uplift is the "
                 "difference of their predictions.",
    "Flipped label": "A baseline uplift model (Lai 2006): one classifier of 'treated "
                     "responder or control non-responder' against the rest; customers likely "
                     "to be either are the ones the treatment moves.",
    "Transformed outcome": "A baseline uplift model (Athey & Imbens 2016): one regression of "
                           "y·(t/p − (1 − t)/(1 − p)), whose expectation is the uplift; it also "
                           "works for amounts such as spend.",
    "Dummy treatment": "A baseline uplift model (Lo 2002): one model of the response on "
                       "the features, the treatment flag and the flag times each numeric "
                       "feature; the uplift is its prediction with the flag on minus that "
                       "with the flag off.",
    "Uplift random forest": "A baseline uplift model (Guelman et al. 2015): a forest of trees "
                            "whose splits look for groups where treated and control customers "
                            "respond most differently (Rzepakowski & Jaroszewicz's divergence "
                            "criterion); the uplift is the trees' mean difference of response "
                            "rates.",
    "Statistically equivalent depths": "The targeting depths around the best one whose "
                                       "profit is not significantly below the best's "
                                       "(bootstrap, 95 %): the thick segment of the profit "
                                       "chart. A wide range means the curve is flat there and "
                                       "the exact best depth is noise.",
    "Zipf discount": "A position discount 1/i (Zipf) or 1/i^β (Zipf-β) in place of nDCG's "
                     "1/log2(i + 1): the top positions weigh more (P-nDCG explorer).",
    "Random / Perfect": "Random: the straight line of targeting in random order (what any "
                        "ranker must beat). Perfect: an oracle that ranks treated responders "
                        "first and control responders last; an upper reference only.",
    "SRM": "Sample ratio mismatch: the arms hold a different share of rows than the design "
           "intended (χ² test). It signals a broken assignment or logging; results of such a "
           "test are suspect.",
    "SMD": "Standardised mean difference of a feature between treated and control "
           "(difference of means ÷ pooled sd). |SMD| > 0.1 is a common sign of imbalance.",
    "Repeated splits": "The data are split into training and test rows several times with "
                       "different seeds; each split trains a fresh model. Numbers are then "
                       "averaged over the splits (mean ± sd) and bands show their spread.",
    "Bootstrap": "Resampling the test rows (within each arm) many times to see how much a "
                 "number would move with other customers: gives the 95 % intervals and the "
                 "paired test of two rankers on the same resamples.",
    "Outcome kind": "Binary: each row responded or not (visit, conversion; coded 0/1, yes/no). "
                    "An amount: any number per row (spend in dollars, minutes). Curves then "
                    "sum the amounts where they would count responders.",
    "Best-arm rule": "With several treatments (e-mails, offers): one uplift model per arm "
                     "predicts what each arm adds against control for each customer; the rule "
                     "gives every customer the arm with the largest predicted uplift above "
                     "its cost, or nothing (control).",
    "Arm cost": "What one treatment of that arm costs, in units of the outcome (visits or "
                "dollars): an arm is worth giving only when its predicted uplift is larger. "
                "The multi-armed Qini curve spends a budget of these costs.",
    "Multi-armed Qini curve": "Gain against budget when each customer may get at most one of "
                              "several arms with different costs (Sverdrup, Wu, Athey & Wager "
                              "2023): customers and arms are added in order of predicted gain "
                              "per unit of cost; the curve scores that path on test rows.",
    "Calibration": "Does the predicted uplift match the observed one? Customers are binned by "
                   "predicted uplift (deciles) and each bin's treated − control difference is "
                   "plotted against its mean prediction. The calibration slope is 1 for a "
                   "calibrated model and 0 when the predictions carry no signal.",
    "Policy value": "Mean outcome per customer if everyone were treated by the policy, "
                    "estimated from a randomised test by inverse-propensity weighting: rows "
                    "whose actual arm is the policy's arm, weighted by 1 / the arm's share.",
    "λ-objective": "LambdaMART trains trees on λ-gradients: for every pair of rows, how much "
                   "swapping them would change the target metric (PCG, DCG/NDCG, MAP, AUC). "
                   "The chosen metric is what the ranker learns to maximise.",
    "LambdaMART": "Gradient-boosted trees (LightGBM) trained as a ranker with a λ-objective "
                  "(Burges 2010); here on uplift relevance labels (Devriendt et al. 2020).",
    "Relevance labels": "What LambdaMART treats as relevant, from each row's arm and outcome "
                        "(TR, TN, CR, CN; Devriendt et al. 2020): Abs1 — treated responders "
                        "and control non-responders relevant (1), the others 0; Abs2 — TR 1, "
                        "CR −1, the others 0; Abs3 — grades TR 3, CN 2, TN 1, CR 0; Rel — "
                        "TR 1/|T|, CR −1/|C| (the relative uplift curve itself).",
    "PCG": "Promoted cumulative gain (Devriendt et al. 2020): an uplift-curve area written as "
           "a ranking metric, so a ranker can be trained on it. On the joint query with Rel "
           "labels it is exactly n × the joint relative AUUC. On separate queries (the "
           "default) it adds each arm's own sum, about |T| × the treated area minus |C| × "
           "the control area — the separate relative AUUC only when the arms are of equal "
           "size (the paper's eq. 30 drops these factors).",
    "Interleaving": "An online experiment that shows each user one list mixing the results of "
                    "rankers A and B. For causal effects (Sato 2021) it measures the "
                    "outcomes of the items on the interleaved list and of items not on it, "
                    "and compares each ranker's shown and not-shown items. Needs far fewer "
                    "users than an A/B test that splits users between A and B.",
    "EPI-RCT / CBI-RCT": "Interleaving designs read with the randomised-trial estimator "
                         "(Sato 2021, eq. 7: shown minus not-shown items of each list). EPI "
                         "shows n items drawn with equal probability from both lists' items — "
                         "unbiased (UpRank reweights the users for whom eq. 7 is undefined; "
                         "pooling only the others, as eq. 7 reads, is biased for short "
                         "lists); CBI lets the two lists add items in turn (Algorithm 1) — "
                         "read this way it is biased when the lists overlap, which CBI-IPS "
                         "corrects by weighting.",
    "ATE": "Average treatment effect: the response rate of the treated minus that of the "
           "control group over everyone in the test — the uplift of treating all.",
    "IPW (inverse propensity weighting)": "Each row counts 1 / (the chance it got its arm), so "
                                          "the randomised arms stand for everyone: the value of "
                                          "a policy that gives other arms than the test did, "
                                          "estimated from the test rows.",
    "Wald interval": "The 95 % interval estimate ± 1.96 standard errors (normal "
                     "approximation); used for the uplift of each decile.",
    "Mallows model": "A distribution over rankings around a central one: a ranking d swaps "
                     "away is e^(−θ·d) times less likely (Central-Mal, AG-Mal, IB-Mal: the "
                     "Mallows baselines of the label ranking paper).",
    "CBI-IPS": "Causal balanced interleaving with inverse-propensity weighting (Sato 2021): "
               "unbiased for the difference of causal effects τA − τB.",
    "AB-total / AB-list": "A/B test estimates: AB-total compares all outcomes of the users who "
                          "saw A with those who saw B (unbiased, slow); AB-list counts only "
                          "the outcomes of listed items (biased for causal effects).",
    "False judgment": "An experiment that picks the worse ranker (wrong sign of τA − τB). The "
                      "rate falls as users are added; 'users needed' is where it drops below "
                      "the target.",
    "Tied scores": "Rows with the same score have no order of their own. 'average' draws the "
                   "expected curve over every order of the tied rows (the default; for the two "
                   "joint absolute definitions, inside a run of ties, the ratio of the "
                   "expected counts); 'stable' keeps them in file order.",
    "Users needed": "The number of users an experiment needs before its false-judgment rate "
                    "falls below the target, read off the simulated curve (log-interpolated).",
    "Label ranking methods": "AMM-rank: several linear hyperplanes per label, trained on every "
                             "known pair of the user's ranking. AMM: the same model on the top "
                             "label only. Central-Mal / AG-Mal / IB-Mal: one consensus ranking "
                             "for everyone / per age × gender group / of the 10 most similar "
                             "users. LR: one logistic model per label. PW-LR: one logistic "
                             "model per pair of labels, soft votes.",
    "Disagreement error": "ε_dis: the share of label pairs whose order the user revealed (clicked "
                          "before clicked, clicked before unclicked) that the model puts the "
                          "wrong way round. 0 is perfect, 0.5 is a random order.",
    "Biased method": "A method whose mean estimate misses the true τA − τB by more than "
                     "simulation noise (a t-test at the largest user count, corrected for "
                     "testing several methods): it can look fast while converging to the wrong "
                     "answer.",
    "MQ2008": "LETOR 4.0 MQ2008: 784 web-search queries of the TREC 2008 Million Query "
              "track with 15,211 judged documents (46 features each), relevance 0, 1 or 2. "
              "Five folds of 60 % training / 20 % validation / 20 % test queries; the paper "
              "reports the mean over the folds.",
    "Queries without a relevant document": "Queries whose documents are all grade 0. AUC, "
                                           "MAUC, average precision and NDCG are undefined "
                                           "there (nothing to put first) and are left out of "
                                           "the means; LETOR's own MAP counts them as 0.",
    "AUC (ranking)": "Per query: the share of (relevant, not relevant) document pairs that "
                     "the ranker orders correctly. 1 = every relevant document above every "
                     "other, 0.5 = random order.",
    "MAUC": "Multi-class AUC (Welleck 2016, one grade against the rest): per query, the AUC "
            "of each relevance grade above 0 against every other document (higher grades "
            "included), weighted by the grade's share of the query's relevant documents. "
            "Because higher grades count as 'the rest', the ideal order (best grade first) "
            "is not always the MAUC-best one. λ-MAUC LambdaMART trains on its λ-gradients.",
    "MAP": "Mean average precision: per query, the mean of the precision at the position of "
           "each relevant document; then the mean over queries.",
    "NDCG@k": "Normalised discounted cumulative gain of the top k: the grades of the top k "
              "documents, each divided by log2(position + 1), as a share of the best possible "
              "order. 1 = ideal top k.",
    "P@k (micro / macro)": "Precision at k over the C relevance grades (Welleck 2016, eqs. 2 "
                           "and 4): the relevant documents in the top k, divided by C·k. The "
                           "same top k serves every grade, so micro and macro coincide when "
                           "every query has k documents (they weigh shorter queries "
                           "differently); both are the binary P@k divided by C.",
    "P-nDCG": "P-nDCG is nDCG with the predicted probability as the discount (Wong 2019): a "
              "relevant document counts as much as the model is confident in it, against the best "
              "possible use of the same probabilities. It separates models that nDCG calls "
              "equal: same positions, different confidence.",
    "Paired per-query test": "Both runs rank the same test queries, so each query gives one "
                             "difference. The t-test asks whether the mean difference is 0; "
                             "the permutation test flips the sign of each difference at random "
                             "(no normality assumed). With more than two runs the p-values are "
                             "corrected for testing several pairs (Holm).",
    "Early stopping": "Boosting stops once the validation queries' score has not improved for "
                      "a number of rounds, and the model keeps its best round.",
}

#: How the score becomes a probability for P-nDCG (core.evaluation.score_to_probability).
PNDCG_NOTE = {
    "rank": "An uplift score is not a probability: here each row's probability is its "
            "score's quantile on the test rows, so P-nDCG compares orderings (a linear "
            "discount), over the whole test list.",
    "platt": "Platt calibration fits P(relevant | score) on the test rows. Careful: a "
             "ranker with no signal gets flat probabilities, and with equal probabilities "
             "P-nDCG is 1 whatever the order — read it beside nDCG.",
}


def models_help(labels) -> str:
    """The Train page's model picker tooltip: each model's glossary sentence under its
    name (the name before " (", "LambdaMART uplift" as "LambdaMART")."""
    names = [label.split(" (")[0] for label in labels]
    return "\n\n".join(f"**{name}**: {GLOSSARY[name.removesuffix(' uplift')]}"
                         for name in names)


__all__ = ["GLOSSARY", "PNDCG_NOTE", "models_help"]
