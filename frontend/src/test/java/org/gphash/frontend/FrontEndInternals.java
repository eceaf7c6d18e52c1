package org.gphash.frontend;

/** What tests of the API's package (org.gphash) need to know of the front end's package-private settings. */
public final class FrontEndInternals {

    /** Batches of more writes than this drop the whole host cache instead of key by key ({@link CoalescingEngine}). */
    public static final int WRITTEN_ONE_BY_ONE_MAX = CoalescingEngine.WRITTEN_ONE_BY_ONE_MAX;

    private FrontEndInternals() {
    }
}
