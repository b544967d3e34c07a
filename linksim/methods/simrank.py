"""SimRank (Jeh & Widom; Monte Carlo by Fogaras & Racz 2004/2005): sim(u, v) = E[c^tau], tau the
first meeting time of two reversed random walks, each walk stepping to a uniformly chosen
in-neighbour. Built as N fingerprint graphs of coalescing walks (:mod:`linksim.methods.fingerprints`)."""

from linksim.fingerprints.kinds import UNIFORM
from linksim.methods import fingerprints as fingerprint_methods
from linksim.methods.method import Method

SIMRANK = Method(
    colour="#1f77b4",
    title="SimRank",
    summary="SimRank = E[c^tau], tau the first meeting time of two reversed random walks, by coalescing "
            "walks stored as fingerprint graphs (Fogaras & Racz 2004/2005)",
    **fingerprint_methods.parts("simrank", walk=UNIFORM),
)
