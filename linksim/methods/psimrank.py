"""PSimRank (Fogaras & Racz 2005): reversed random walks coupled by a random order of the pages per
step, each walk stepping to its in-neighbour first in that order, so that two walks meet with the
Jaccard similarity of the in-sets. Built as N fingerprint graphs (:mod:`linksim.methods.fingerprints`)."""

from linksim.methods import fingerprints as fingerprint_methods
from linksim.methods.method import Method

PSIMRANK = Method(
    title="PSimRank",
    summary="PSimRank: reversed random walks coupled by a random permutation per step, so that they meet "
            "with the Jaccard similarity of the in-sets (Fogaras & Racz 2005)",
    **fingerprint_methods.parts("psimrank", walk="smallest"),
)
