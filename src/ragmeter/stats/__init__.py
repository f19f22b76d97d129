"""Statistics (NumPy only): bootstrap confidence intervals, paired comparison of two runs, and
agreement with human labels."""

from __future__ import annotations

from ragmeter.stats.agreement import agreement_summary
from ragmeter.stats.bootstrap import bootstrap_ci, kendall_tau_b_bootstrap_ci, mean_cis, paired_bootstrap_ci
from ragmeter.stats.paired import PairedDifference, paired_difference, sign_flip_test
from ragmeter.stats.rank import (
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    kendall_tau_b,
    pair_accuracy,
    pair_credits,
    rankdata,
    roc_auc,
    spearman,
    true_negative_rate,
    true_positive_rate,
)

__all__ = [
    "PairedDifference",
    "accuracy",
    "agreement_summary",
    "balanced_accuracy",
    "bootstrap_ci",
    "cohen_kappa",
    "kendall_tau_b",
    "kendall_tau_b_bootstrap_ci",
    "mean_cis",
    "pair_accuracy",
    "pair_credits",
    "paired_bootstrap_ci",
    "paired_difference",
    "rankdata",
    "roc_auc",
    "sign_flip_test",
    "spearman",
    "true_negative_rate",
    "true_positive_rate",
]
