"""Analyses outside the pure core: the HTML report of the papers' plots (matplotlib) and the
text-based evaluation Δ(A, T) (TF-IDF by scikit-learn). Installed as ``linksim.analysis``; the core
(:mod:`linksim`) imports neither library (a test checks it)."""
