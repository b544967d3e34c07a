// Related pages, read from the SIMILAR_TO relationships written by `linksim similar METHOD`.
// Methods: simrank, psimrank, xjaccard, pagesim. Each query is named by the comment line before it;
// linksim.cypher.query("related_pages", NAME).
//
// The current lists of a method are the relationships of the `runs` of its one
// (:LinksimCurrent {algorithm}) node (its last full run and the updates since, which rewrote only
// the lists that changed) that no update has replaced since (`until` not one of the runs). A run
// changes `runs` in place once its relationships are all written. Each query reads `runs` once and
// then those relationships only: a reader sees the lists before a run or after it, whole, never a
// mix or nothing (see procedures/runs.py). `coalesce` reads databases written before updates.

// name: related_pages
// The $limit pages most similar to the page $url by $method, with titles and PageRank.
// In Neo4j Browser: :param url => 'https://en.wikipedia.org/wiki/Albert_Einstein'
//                   :param method => 'simrank'
//                   :param limit => 10
MATCH (current:LinksimCurrent {algorithm: $method})
WITH coalesce(current.runs, [current.run]) AS runs
MATCH (p:Page {url: $url})-[s:SIMILAR_TO]->(q:Page)
WHERE s.run IN runs AND NOT coalesce(s.until, 0) IN runs
RETURN s.rank AS rank, q.url AS url, q.title AS title, s.score AS score, q.pagerank AS pagerank
ORDER BY s.rank
LIMIT $limit;

// name: related_pages_procedure
// The same answer through linksim's procedure, which reads the run protocol inside the server
// (installed by `linksim neo4j start`; `linksim neo4j plugin` builds it for another server).
CALL linksim.related($url, $method, $limit) YIELD rank, related, score
RETURN rank, related.url AS url, related.title AS title, score, related.pagerank AS pagerank;

// name: related_hosts
// The $limit hosts most similar to the host $host by $method (`linksim similar METHOD --graph
// hosts`, whose runs are current under the key '<method>@hosts'), with their PageRank on the host
// graph and their number of pages.
// In Neo4j Browser: :param host => 'www.uni-lj.si'
MATCH (current:LinksimCurrent {algorithm: $method + '@hosts'})
WITH coalesce(current.runs, [current.run]) AS runs
MATCH (h:Host {name: $host})-[s:SIMILAR_TO]->(g:Host)
WHERE s.run IN runs AND NOT coalesce(s.until, 0) IN runs
RETURN s.rank AS rank, g.name AS host, s.score AS score, g.pagerank AS pagerank,
       COUNT { (g)<-[:ON_HOST]-() } AS pages
ORDER BY s.rank
LIMIT $limit;

// name: related_pages_all_methods
// The related pages of $url by every method that has a current run, side by side (rank <= $limit).
MATCH (current:LinksimCurrent)
WITH current.algorithm AS method, coalesce(current.runs, [current.run]) AS runs
MATCH (p:Page {url: $url})-[s:SIMILAR_TO]->(q:Page)
WHERE s.run IN runs AND NOT coalesce(s.until, 0) IN runs AND s.rank <= $limit
RETURN method, s.rank AS rank, q.url AS url, q.title AS title, s.score AS score
ORDER BY method, rank;

// name: related_graph
// For Neo4j Browser's graph view: the page $url and its related pages by $method as paths.
MATCH (current:LinksimCurrent {algorithm: $method})
WITH coalesce(current.runs, [current.run]) AS runs
MATCH path = (p:Page {url: $url})-[s:SIMILAR_TO]->(q:Page)
WHERE s.run IN runs AND NOT coalesce(s.until, 0) IN runs AND s.rank <= $limit
RETURN path;

// name: related_graph_procedure
// The same paths through linksim's procedure: the page, its related pages and the relationships.
CALL linksim.related($url, $method, $limit);

// name: similarity_runs
// The current SIMILAR_TO run of each method on the pages: when, with which parameters, how many
// relationships (the host graph's runs are keyed '<method>@hosts').
MATCH (current:LinksimCurrent) WHERE NOT current.algorithm ENDS WITH '@hosts'
WITH current.algorithm AS method, current.run AS id
MATCH (run:LinksimRun {id: id})
RETURN method, run.id AS run, run.started AS started, run.parameters AS parameters, run.pages AS pages,
       run.written AS relationships
ORDER BY method;
