package org.gphash.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.zip.CRC32C;

import org.gphash.shard.ShardFunction;

/**
 * Which shard of a cluster index lives where: the one file every node and every client of a cluster
 * is given ({@code gphash cluster init} writes it). Shard {@code i} is served by node {@code i}, a
 * process with that name listening at that address; a key's shard is {@link ShardFunction} of the
 * manifest's seed, the same function the sharded index on one host uses.
 *
 * <p>The file is text, one {@code key=value} per line, ending in a CRC32C of every byte before that
 * line: a node or client given a damaged or hand-edited manifest refuses it rather than route keys
 * to shards their writes never went to. The cluster's identity (random at init) is also stamped in
 * every node's directory ({@link NodeIdentity}), so a node started over another cluster's pools is
 * refused.
 *
 * @param name      the cluster's name (Hazelcast's cluster name: members of other clusters do not join)
 * @param id        the cluster's identity, random at init, never 0
 * @param seed      the shard function's seed
 * @param keySize   every shard's key size
 * @param valueSize every shard's value size
 * @param nodes     node {@code i} serves shard {@code i}
 */
public record ClusterManifest(String name, long id, long seed, int keySize, int valueSize, List<Node> nodes) {

    /** The format this build writes and reads. */
    public static final int FORMAT = 1;
    /** The most nodes (shards) a cluster has: a shard number fits the sharded index's byte. */
    public static final int MAX_NODES = 256;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}");
    private static final String CRC_KEY = "crc32c=";

    /**
     * A node of the cluster.
     *
     * @param name its name, unique in the cluster
     * @param host the host name or address its member listens on
     * @param port its member's port
     */
    public record Node(String name, String host, int port) {

        /** Checks the fields. */
        public Node {
            if (name == null || !NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("a node name is 1 to 63 letters, digits, '_', '.' or '-', starting "
                        + "with a letter or digit: got '" + name + "'");
            }
            if (host == null || host.isBlank() || host.contains(" ")) {
                throw new IllegalArgumentException("node " + name + " has no host");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("node " + name + "'s port must be 1 to 65535, got " + port);
            }
        }

        /**
         * Parses {@code NAME=HOST:PORT}, as {@code gphash cluster init --node} takes it.
         *
         * @param spec the text
         * @return the node
         */
        public static Node parse(String spec) {
            int eq = spec.indexOf('=');
            int colon = spec.lastIndexOf(':');
            if (eq < 1 || colon < eq + 2) {
                throw new IllegalArgumentException("a node is NAME=HOST:PORT (for example a=10.0.0.1:5701), got '" + spec + "'");
            }
            try {
                return new Node(spec.substring(0, eq), spec.substring(eq + 1, colon), Integer.parseInt(spec.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("the port of node '" + spec + "' is not a number");
            }
        }

        /** {@return HOST:PORT} */
        public String address() {
            return host + ":" + port;
        }
    }

    /** Checks the fields. */
    public ClusterManifest {
        nodes = List.copyOf(nodes);
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("a cluster name is 1 to 63 letters, digits, '_', '.' or '-', got '" + name + "'");
        }
        if (id == 0) {
            throw new IllegalArgumentException("a cluster's identity is never 0");
        }
        if (nodes.isEmpty() || nodes.size() > MAX_NODES) {
            throw new IllegalArgumentException("a cluster has 1 to " + MAX_NODES + " nodes, got " + nodes.size());
        }
        if (keySize < 1 || valueSize < 1) {
            throw new IllegalArgumentException("key and value sizes must be positive, got " + keySize + " and " + valueSize);
        }
        Set<String> names = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        for (Node n : nodes) {
            if (!names.add(n.name())) {
                throw new IllegalArgumentException("two nodes are named " + n.name() + ": each node serves one shard");
            }
            if (!addresses.add(n.address())) {
                throw new IllegalArgumentException("two nodes listen at " + n.address());
            }
        }
    }

    /**
     * A new cluster's manifest: a random identity and shard seed.
     *
     * @param name      the cluster's name
     * @param keySize   the key size
     * @param valueSize the value size
     * @param nodes     node {@code i} serves shard {@code i}
     * @return the manifest
     */
    public static ClusterManifest create(String name, int keySize, int valueSize, List<Node> nodes) {
        SecureRandom random = new SecureRandom();
        long id;
        do {
            id = random.nextLong();
        } while (id == 0);
        return new ClusterManifest(name, id, random.nextLong(), keySize, valueSize, nodes);
    }

    /** {@return the number of shards: one per node} */
    public int shards() {
        return nodes.size();
    }

    /** {@return the shard numbers, 0 to {@code shards() - 1}} */
    public List<Integer> shardNumbers() {
        return IntStream.range(0, shards()).boxed().toList();
    }

    /** {@return the function that gives a key's shard} */
    public ShardFunction function() {
        return new ShardFunction(seed, shards());
    }

    /**
     * The shard a node serves.
     *
     * @param nodeName the node's name
     * @return its shard
     * @throws IllegalArgumentException when no node has that name, naming those that do
     */
    public int shardOf(String nodeName) {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).name().equals(nodeName)) {
                return i;
            }
        }
        List<String> names = new ArrayList<>();
        nodes.forEach(n -> names.add(n.name()));
        throw new IllegalArgumentException("cluster " + name + " has no node named '" + nodeName + "'; its nodes are " + names);
    }

    /** {@return the manifest as its file holds it, checksum line included} */
    public String encode() {
        StringBuilder b = new StringBuilder();
        b.append("# gphash cluster manifest, written by 'gphash cluster init'. Give the same file to every node and\n");
        b.append("# client. Do not edit: the last line is a checksum of the lines above it.\n");
        b.append("format=").append(FORMAT).append('\n');
        b.append("name=").append(name).append('\n');
        b.append("id=").append(Long.toHexString(id)).append('\n');
        b.append("seed=").append(Long.toHexString(seed)).append('\n');
        b.append("key-size=").append(keySize).append('\n');
        b.append("value-size=").append(valueSize).append('\n');
        b.append("shards=").append(shards()).append('\n');
        for (int i = 0; i < nodes.size(); i++) {
            Node n = nodes.get(i);
            b.append("shard.").append(i).append('=').append(n.name()).append(' ').append(n.address()).append('\n');
        }
        String body = b.toString();
        return body + CRC_KEY + Integer.toHexString(crc(body)) + '\n';
    }

    /** {@return a digest of the whole manifest: nodes and clients compare it with the cluster's} */
    public long digest() {
        CRC32C crc = new CRC32C();
        crc.update(encode().getBytes(StandardCharsets.UTF_8));
        return (id << 32) ^ crc.getValue();
    }

    private static int crc(String text) {
        CRC32C crc = new CRC32C();
        crc.update(text.getBytes(StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }

    /**
     * Parses a manifest's text.
     *
     * @param text   what the file holds
     * @param source where it came from, for messages
     * @return the manifest
     * @throws IllegalArgumentException naming what is wrong
     */
    public static ClusterManifest decode(String text, String source) {
        int at = text.lastIndexOf(CRC_KEY);
        if (at < 0 || (at > 0 && text.charAt(at - 1) != '\n')) {
            throw new IllegalArgumentException(source + " is not a gphash cluster manifest (no checksum line)");
        }
        String body = text.substring(0, at);
        String stored = text.substring(at + CRC_KEY.length()).strip();
        if (!stored.equals(Integer.toHexString(crc(body)))) {
            throw new IllegalArgumentException(source + ": the checksum does not match the manifest's lines (damaged or "
                    + "edited); write a new one with 'gphash cluster init' only for a new cluster");
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : body.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException(source + ": not a key=value line: '" + line + "'");
            }
            fields.put(line.substring(0, eq), line.substring(eq + 1));
        }
        try {
            int format = Integer.parseInt(field(fields, "format", source));
            if (format != FORMAT) {
                throw new IllegalArgumentException(source + " has manifest format " + format + "; this build reads format " + FORMAT);
            }
            int shards = Integer.parseInt(field(fields, "shards", source));
            List<Node> nodes = new ArrayList<>();
            for (int i = 0; i < shards; i++) {
                String[] parts = field(fields, "shard." + i, source).split(" ");
                if (parts.length != 2) {
                    throw new IllegalArgumentException(source + ": shard." + i + " is not 'NAME HOST:PORT'");
                }
                nodes.add(Node.parse(parts[0] + "=" + parts[1]));
            }
            return new ClusterManifest(field(fields, "name", source), Long.parseUnsignedLong(field(fields, "id", source), 16),
                    Long.parseUnsignedLong(field(fields, "seed", source), 16),
                    Integer.parseInt(field(fields, "key-size", source)), Integer.parseInt(field(fields, "value-size", source)),
                    nodes);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(source + ": a number field does not parse (" + e.getMessage() + ")");
        }
    }

    private static String field(Map<String, String> fields, String key, String source) {
        String v = fields.get(key);
        if (v == null) {
            throw new IllegalArgumentException(source + " has no '" + key + "' line");
        }
        return v;
    }

    /**
     * Reads a manifest file.
     *
     * @param file the file
     * @return the manifest
     * @throws IllegalArgumentException when it is not a sound manifest
     * @throws java.io.UncheckedIOException when it cannot be read
     */
    public static ClusterManifest read(Path file) {
        try {
            return decode(Files.readString(file, StandardCharsets.UTF_8), file.toString());
        } catch (NoSuchFileException e) {
            throw new UncheckedIOException("no cluster manifest at " + file + " (write one with 'gphash cluster init')", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the cluster manifest " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Writes the manifest to a new file (refused if it exists), owner-only, whole or not at all.
     *
     * @param file where
     */
    public void writeNew(Path file) {
        if (Files.exists(file)) {
            throw new IllegalArgumentException(file + " exists: a cluster manifest is written once, for a new cluster");
        }
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        try {
            Files.deleteIfExists(tmp);
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, encode(), StandardCharsets.UTF_8);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the cluster manifest " + file + ": " + e.getMessage(), e);
        }
    }
}
