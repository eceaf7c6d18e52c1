package org.gphash.cluster;

/** No member of the cluster serves a shard now, or the one that did left while running a call. */
final class NodeUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    NodeUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
