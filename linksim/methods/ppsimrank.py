"""P-PSimRank: PSimRank over in- AND out-links. At each step of a fingerprint, one coin for every
walk chooses the direction (in-links or out-links, probability 1/2 each: P-Rank's weighting,
Zhao, Han & Sun, CIKM 2009, with lambda = 1/2), and each walk steps to the page first in the
step's random order among its page and that page's in- or out-neighbours (PSimRank's coupling,
Fogaras & Racz 2005, over *closed* neighbourhoods). Two walks therefore meet at a step with the
Jaccard similarity of the two pages' closed neighbourhoods in that direction: shared parents
(co-citation), shared children (coupling) and a link between the two pages all count, and a page
with only out-links is related to others as well as a page with in-links. Built as N fingerprint
graphs (:mod:`linksim.methods.fingerprints`); walks never stop (a walk may stay on its page).

The papers' default L = 10 is cut to 3: on Wikispeedia the exact scores' precision@10 and sibling
Gamma no longer change after the third step (see the docs' quality page), and shorter walks
keep the fingerprint trees small."""

from linksim.fingerprints.kinds import BOTH
from linksim.methods import fingerprints as fingerprint_methods
from linksim.methods.method import Method

_parts = fingerprint_methods.parts("ppsimrank", walk=BOTH)
_parts["defaults"] = dict(_parts["defaults"], length=3)

PPSIMRANK = Method(
    colour="#ff7f0e",
    title="P-PSimRank",
    summary="P-PSimRank: PSimRank over in- and out-links (a coin per step, P-Rank's weighting) and closed "
            "neighbourhoods, so shared parents, shared children and direct links all count",
    **_parts,
)
