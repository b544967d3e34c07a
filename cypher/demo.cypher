// What `linksim demo` finds already done, so that a rerun reuses it. linksim.cypher.query("demo", NAME).

// name: crawled_pages_with_prefix
MATCH (p:Page) WHERE p.url STARTS WITH $prefix AND p.crawled
RETURN count(p) AS n;

// name: ranked_pages
MATCH (p:Page) WHERE p.pagerank IS NOT NULL
RETURN count(p) AS n;

// name: pages
MATCH (p:Page)
RETURN count(p) AS n;
