// The Idempotency-Key middleware (docs/http-idempotency.md): the core and its Express and Fastify adapters.
export { Claimed, HttpIdempotency, defaultReplayHeaders, isFinal, maxKeyChars, normaliseTemplate, operationOf, problem } from './core';
export type { HttpIdempotencyOptions, HttpRequest, HttpResponse, IdemContext, RouteOptions } from './core';
export { expressIdempotency } from './express';
export type { ExpressOptions } from './express';
export { fastifyIdempotency } from './fastify';
export type { FastifyOptions } from './fastify';
