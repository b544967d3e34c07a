"""PSimRank (Fogaras & Racz 2005): reversed random walks coupled by a random order of the pages per
step, each walk stepping to its in-neighbour first in that order, so that two walks meet with the
Jaccard similarity of the in-sets. Built as N fingerprint graphs (:mod:`linksim.methods.fingerprints`)."""

from linksim.fingerprints.kinds import SMALLEST
from linksim.methods import fingerprints as fingerprint_methods
from linksim.methods.method import Method

PSIMRANK = Method(
    colour="#d62728",
    title="PSimRank",
    summary="PSimRank: reversed random walks coupled by a random permutation per step, so that they meet "
            "with the Jaccard similarity of the in-sets (Fogaras & Racz 2005)",
    # Its first step is a min-hash of the in-links, so its band candidates find most of the pages
    # its sampled trees miss (SimRank's is a uniform in-link, whose bands cost more than they
    # find); benchmarks/judged.py judges each reading against the exact lists and another seed's
    # noise floor, at its rate.
    **fingerprint_methods.parts("psimrank", walk=SMALLEST, reading={"sample": 8, "_band_candidates": 128}),
)
