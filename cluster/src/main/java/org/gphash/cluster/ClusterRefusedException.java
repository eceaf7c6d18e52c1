package org.gphash.cluster;

/**
 * A node, or a client, refused to start: its directory, its manifest or the running cluster do not
 * agree (another cluster's pools, a shard another node serves, a manifest that differs from the
 * cluster's). Nothing was written.
 */
public final class ClusterRefusedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * A refusal.
     *
     * @param message what disagrees, and what to do
     */
    public ClusterRefusedException(String message) {
        super(message);
    }
}
