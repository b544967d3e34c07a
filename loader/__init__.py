"""Crawl files -> Neo4j: format readers, URL normalisation, batched and bulk import."""
