/**
 * How BktCache loads: the schedule of its loading phases and the plain Java reference of the
 * selection the kernels run. Its configuration, policies and figures are API (package
 * {@code org.gphash.bktcache} in module {@code org.gphash}).
 */
module org.gphash.bktcache {
    requires transitive org.gphash;

    exports org.gphash.bktcache.loading;
}
