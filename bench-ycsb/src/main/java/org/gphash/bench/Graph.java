package org.gphash.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A directed graph as in-edge lists (CSR: {@code inOffsets}, {@code inSources}) plus out-degrees,
 * which is what pull-style PageRank reads. Built from an R-MAT generator (Graph500's parameters)
 * or from an edge list file such as the Twitter graph.
 */
final class Graph {

    final int vertices;
    final int[] inOffsets;
    final int[] inSources;
    final int[] outDegree;

    private Graph(int vertices, int[] src, int[] dst, int edges) {
        this.vertices = vertices;
        this.outDegree = new int[vertices];
        this.inOffsets = new int[vertices + 1];
        for (int e = 0; e < edges; e++) {
            outDegree[src[e]]++;
            inOffsets[dst[e] + 1]++;
        }
        for (int v = 0; v < vertices; v++) {
            inOffsets[v + 1] += inOffsets[v];
        }
        this.inSources = new int[edges];
        int[] fill = Arrays.copyOf(inOffsets, vertices);
        for (int e = 0; e < edges; e++) {
            inSources[fill[dst[e]]++] = src[e];
        }
    }

    long edges() {
        return inSources.length;
    }

    /**
     * R-MAT with Graph500's probabilities (a 0.57, b 0.19, c 0.19, d 0.05): 2^scale vertices and
     * edgeFactor x 2^scale edges; vertex numbers are then permuted at random, as Graph500 does,
     * so that the high-degree vertices are not the low numbers. Self-loops and duplicates stay.
     */
    static Graph rmat(int scale, int edgeFactor, long seed) {
        if (scale < 1 || scale > 30) {
            throw new IllegalArgumentException("R-MAT scale must be 1..30, got " + scale);
        }
        int n = 1 << scale;
        long m = (long) edgeFactor << scale;
        if (m > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("too many edges: " + m);
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] perm = new int[n];
        for (int i = 0; i < n; i++) {
            perm[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int[] src = new int[(int) m];
        int[] dst = new int[(int) m];
        for (int e = 0; e < m; e++) {
            int u = 0;
            int v = 0;
            for (int bit = scale - 1; bit >= 0; bit--) {
                double r = random.nextDouble();
                if (r < 0.57) {
                    continue;
                }
                if (r < 0.76) {
                    v |= 1 << bit;
                } else if (r < 0.95) {
                    u |= 1 << bit;
                } else {
                    u |= 1 << bit;
                    v |= 1 << bit;
                }
            }
            src[e] = perm[u];
            dst[e] = perm[v];
        }
        return new Graph(n, src, dst, (int) m);
    }

    /**
     * An edge list: one edge per line, "source target" separated by white space (tabs or spaces),
     * non-negative integers; lines starting with '#' or '%' are comments. Vertices are 0..max id.
     */
    static Graph edgeList(Path file) throws IOException {
        int[] src = new int[1 << 16];
        int[] dst = new int[1 << 16];
        int edges = 0;
        int max = -1;
        try (BufferedReader r = Files.newBufferedReader(file)) {
            String line;
            long lineNo = 0;
            while ((line = r.readLine()) != null) {
                lineNo++;
                String t = line.strip();
                if (t.isEmpty() || t.startsWith("#") || t.startsWith("%")) {
                    continue;
                }
                String[] parts = t.split("\\s+");
                int u;
                int v;
                try {
                    if (parts.length < 2) {
                        throw new NumberFormatException();
                    }
                    u = Integer.parseInt(parts[0]);
                    v = Integer.parseInt(parts[1]);
                    if (u < 0 || v < 0) {
                        throw new NumberFormatException();
                    }
                } catch (NumberFormatException e) {
                    throw new IOException(file + ": line " + lineNo + ": expected two vertex numbers "
                            + "(non-negative integers), got '" + t + "'");
                }
                if (edges == src.length) {
                    src = Arrays.copyOf(src, edges * 2);
                    dst = Arrays.copyOf(dst, edges * 2);
                }
                src[edges] = u;
                dst[edges] = v;
                edges++;
                max = Math.max(max, Math.max(u, v));
            }
        }
        if (edges == 0) {
            throw new IOException(file + ": no edges");
        }
        return new Graph(max + 1, src, dst, edges);
    }
}
