/**
 * The service-provider interface: what a backend implements ({@link org.gphash.spi.Engine}) and how
 * the index finds it ({@link org.gphash.spi.EngineFactory} through {@link java.util.ServiceLoader};
 * the GPU engine of the gphash-cuda jar registers one). Applications use {@link org.gphash.GPHashIndex}
 * and its views; this package is for engines, tools and tests that work below the index.
 */
package org.gphash.spi;
