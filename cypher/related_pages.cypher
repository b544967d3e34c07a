// Related pages, read from the SIMILAR_TO relationships written by `linksim similar METHOD`.
// Only the method's current run is read (see procedures/similarity.py), so a rerun in progress
// never shows a mix of old and new results. Methods: simrank, psimrank, xjaccard, pagesim.
// Each query is named by the comment line before it; linksim.cypher.query("related_pages", NAME).

// name: related_pages
// The $limit pages most similar to the page $url by $method, with titles and PageRank.
// In Neo4j Browser: :param url => 'https://en.wikipedia.org/wiki/Albert_Einstein'
//                   :param method => 'simrank'
//                   :param limit => 10
MATCH (run:LinksimRun {algorithm: $method, current: true})
MATCH (p:Page {url: $url})-[s:SIMILAR_TO {run: run.id}]->(q:Page)
RETURN s.rank AS rank, q.url AS url, q.title AS title, s.score AS score, q.pagerank AS pagerank
ORDER BY s.rank
LIMIT $limit;

// name: related_pages_all_methods
// The related pages of $url by every method that has a current run, side by side (rank <= $limit).
MATCH (run:LinksimRun {current: true})
MATCH (p:Page {url: $url})-[s:SIMILAR_TO {run: run.id}]->(q:Page)
WHERE s.rank <= $limit
RETURN run.algorithm AS method, s.rank AS rank, q.url AS url, q.title AS title, s.score AS score
ORDER BY method, rank;

// name: related_graph
// For Neo4j Browser's graph view: the page $url and its related pages by $method as paths.
MATCH (run:LinksimRun {algorithm: $method, current: true})
MATCH path = (p:Page {url: $url})-[s:SIMILAR_TO {run: run.id}]->(q:Page)
WHERE s.rank <= $limit
RETURN path;

// name: similarity_runs
// The current SIMILAR_TO run of each method: when, with which parameters, how many relationships.
MATCH (run:LinksimRun {current: true})
RETURN run.algorithm AS method, run.id AS run, run.started AS started, run.parameters AS parameters,
       run.written AS relationships
ORDER BY method;
