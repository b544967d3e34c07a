package io.linksim;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/**
 * The current related pages (or hosts) of one page, read under linksim's run protocol
 * (linksim/procedures/runs.py): the relationships of the method's current runs that no current
 * update has replaced. The runs are read once, then those relationships, in one transaction, as
 * the protocol query does: a caller sees a page's list before a switch or after it, whole.
 * Java because Neo4j runs procedures only on the JVM; `linksim neo4j start` compiles this file
 * against the server's own jars.
 */
public class Related {
    private static final Label CURRENT = Label.label("LinksimCurrent");
    private static final RelationshipType SIMILAR_TO = RelationshipType.withName("SIMILAR_TO");

    @Context
    public Transaction tx;

    /** One related page: its rank (1 the best), the page asked for, the related page, the score
     * and the SIMILAR_TO relationship between them (for Neo4j Browser's graph view). */
    public static final class Row {
        public final long rank;
        public final Node page;
        public final Node related;
        public final double score;
        public final Relationship similarity;

        Row(long rank, Node page, Node related, double score, Relationship similarity) {
            this.rank = rank;
            this.page = page;
            this.related = related;
            this.score = score;
            this.similarity = similarity;
        }
    }

    @Procedure(name = "linksim.related", mode = Mode.READ)
    @Description("linksim.related(url, method, k = 10): the k pages most similar to the page with "
            + "this url by this method (e.g. 'spectral'), best first, from its current SIMILAR_TO "
            + "lists: never a mix of two runs or nothing while `linksim similar` rewrites them.")
    public Stream<Row> related(@Name("url") String url, @Name("method") String method,
                               @Name(value = "k", defaultValue = "10") long k) {
        return lists(Label.label("Page"), "url", url, method, k);
    }

    @Procedure(name = "linksim.relatedHosts", mode = Mode.READ)
    @Description("linksim.relatedHosts(host, method, k = 10): the k hosts most similar to this host "
            + "by this method on the host graph (`linksim similar METHOD --graph hosts`), best first.")
    public Stream<Row> relatedHosts(@Name("host") String host, @Name("method") String method,
                                    @Name(value = "k", defaultValue = "10") long k) {
        return lists(Label.label("Host"), "name", host, method + "@hosts", k);
    }

    private Stream<Row> lists(Label label, String property, String value, String key, long k) {
        if (value == null || key == null) {
            throw new IllegalArgumentException("linksim: the " + property + " and the method must not be null");
        }
        if (k < 1) {
            throw new IllegalArgumentException("linksim: k must be at least 1, not " + k);
        }
        Node current = tx.findNode(CURRENT, "algorithm", key);
        if (current == null) {
            throw new IllegalArgumentException("linksim: no current SIMILAR_TO run of '" + key
                    + "' (run `linksim similar` first); current: " + currentKeys());
        }
        Node page = tx.findNode(label, property, value);
        if (page == null) {
            return Stream.empty();
        }
        Set<Object> runs = runs(current);
        List<Row> rows = new ArrayList<>();
        for (Relationship s : page.getRelationships(Direction.OUTGOING, SIMILAR_TO)) {
            if (!runs.contains(id(s.getProperty("run", null))) || runs.contains(id(s.getProperty("until", null)))) {
                continue;
            }
            Object rank = s.getProperty("rank", null);
            Object score = s.getProperty("score", null);
            if (!(rank instanceof Number) || ((Number) rank).longValue() > k) {
                continue;
            }
            rows.add(new Row(((Number) rank).longValue(), page, s.getEndNode(),
                    score instanceof Number ? ((Number) score).doubleValue() : Double.NaN, s));
        }
        rows.sort(Comparator.comparingLong((Row row) -> row.rank));
        return rows.stream();
    }

    /** The method's current runs: `runs`, or `run` alone in databases written before updates. */
    private static Set<Object> runs(Node current) {
        Set<Object> runs = new HashSet<>();
        Object value = current.getProperty("runs", null);
        if (value != null && value.getClass().isArray()) {
            for (int i = 0; i < Array.getLength(value); i++) {
                runs.add(id(Array.get(value, i)));
            }
        } else if (current.hasProperty("run")) {
            runs.add(id(current.getProperty("run")));
        }
        runs.remove(null);
        return runs;
    }

    /** A run id as one type (integers of any width as long; the string ids of earlier versions). */
    private static Object id(Object value) {
        return value instanceof Number ? (Object) ((Number) value).longValue() : value;
    }

    private Set<String> currentKeys() {
        Set<String> keys = new TreeSet<>();
        try (ResourceIterator<Node> nodes = tx.findNodes(CURRENT)) {
            nodes.forEachRemaining(node -> keys.add(String.valueOf(node.getProperty("algorithm", ""))));
        }
        return keys;
    }
}
