"""Neo4j <-> linksim: stream edges out, run an algorithm, write results back, record the run."""

from linksim.procedures.runner import QueryRunner
from linksim.procedures.schema import apply_schema

__all__ = ["QueryRunner", "apply_schema"]
