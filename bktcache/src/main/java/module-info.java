/** BktCache's configuration, policies and statistics: the frozen-bucket cache's API. */
module org.gphash.bktcache {
    exports org.gphash.bktcache;
}
