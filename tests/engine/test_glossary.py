"""The metric glossary: one sentence for every metric a run records and every label the tables print."""

from __future__ import annotations

import re

import pytest

from engine.metrics.glossary import METRICS, explain, metric_key


def test_every_entry_is_one_sentence():
    for key in METRICS:
        text = explain(key)
        assert text and text[0].isupper() and text.endswith("."), key
        # one sentence: no full stop followed by a space and a capital inside
        assert not re.search(r"\.\s+[A-Z]", text[:-1]), (key, text)


@pytest.mark.parametrize("label, key, split", [
    ("NMSE ID", "nmse", "id"), ("NMSE OOD", "nmse", "ood"), ("Test NMSE", "nmse", None),
    ("Acc₀.₁ OOD", "acc_0.1", "ood"), ("Median NMSE (test ID)", "nmse", "id"), ("SA", "sa", None),
    ("RMSLE", "rmsle", None), ("R² > 0.9", "acc_0.9", None), ("Trajectory R²", "trajectory_r2", None),
    ("Train NMSE", "train_loss", "train"), ("Hausdorff", "hausdorff", None), ("HD₉₅", "hd95", None),
])
def test_printed_labels_find_their_metric(label, key, split):
    assert metric_key(label) == (key, split)


def test_the_split_is_said_where_it_matters():
    assert "out-of-domain" in explain("NMSE OOD")
    assert "in-domain" in explain("Acc₀.₁ ID")
    assert "domain" not in explain("SA")


@pytest.mark.parametrize("label", ["Model", "Status", "Task", "Started", "Worker", "", "nonsense"])
def test_other_headers_get_no_metric_text(label):
    assert explain(label) is None


def test_every_metric_a_run_stores_is_explained():
    """The keys the scorer writes for each split of a law, a surface, a system and a structure."""
    stored = ["nmse", "acc_0.1", "r2", "n", "chamfer", "hausdorff", "hausdorff95", "emd", "sr2", "acc_0.9",
              "precision", "recall", "f1", "bm", "shd", "ted", "jaccard", "recovered", "rmsle", "sa"]
    assert [k for k in stored if explain(k) is None] == []
