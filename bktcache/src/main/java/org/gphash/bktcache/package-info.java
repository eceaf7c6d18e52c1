/**
 * BktCache, the frozen LFU bucket cache held in GPU memory and reloaded on its own CUDA stream (GPHash &sect;3.3).
 */
package org.gphash.bktcache;
