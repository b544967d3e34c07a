"""The Monte Carlo indexes of Fogaras & Racz: the random draws every walk takes (randomness), the
coalescing walks and their fingerprint graphs (walks), the SimRank/PSimRank index read as trees
(index), extended Jaccard's min-hashes (minhash), and the exact references on small graphs (exact)."""
