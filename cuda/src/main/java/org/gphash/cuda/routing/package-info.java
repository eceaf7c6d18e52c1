/**
 * How the GPU engine runs each call: the one router ({@link org.gphash.cuda.routing.Router}) and
 * what it decides by: the index placement chosen at open ({@link org.gphash.cuda.routing.MirrorChoice}),
 * a batch's kinds ({@link org.gphash.cuda.routing.KindCounts}, {@link org.gphash.cuda.routing.ChunkKinds})
 * and whether its keys repeat ({@link org.gphash.cuda.routing.DistinctKeys}); and conditional batches,
 * run as plain ones under the engine's lock ({@link org.gphash.cuda.routing.ConditionalBatches}).
 * Public for the engine's other packages, not API.
 */
package org.gphash.cuda.routing;
