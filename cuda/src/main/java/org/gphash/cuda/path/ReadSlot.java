package org.gphash.cuda.path;

/**
 * A slot a path claimed under the engine's lock for a small batch of gets, which it then issues and
 * the caller waits for outside the lock ({@link OneLaunchBatches#claimRead}, {@link OneLaunchBatches#issueRead}).
 * Only the path that claimed a slot issues on it.
 */
public interface ReadSlot {
}
