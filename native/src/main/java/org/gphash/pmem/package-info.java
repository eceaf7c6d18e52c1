/**
 * Hand-written Foreign Function &amp; Memory bindings for the few functions of PMDK's libpmem the
 * engine uses, in the shape jextract would generate (one static method per C function, with its
 * {@code FunctionDescriptor} and {@code MethodHandle} beside it). jextract is not available on our
 * build machines, and five functions do not justify a build-time code generator.
 */
package org.gphash.pmem;
