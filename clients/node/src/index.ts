// idem-client: workers in TypeScript / JavaScript that agree with the C++ library to the byte.
export { JsonError, canonicalJson, canonicalJsonFromText, esNumberToString, maxJsonDepth, parseJsonStrict } from './canonicaljson';
export type { JsonErrorKind, JsonValue } from './canonicaljson';
export {
    canonicalBytes, canonicalRequest, canonicalRequestFromText, digestOfCanonical, requestDigest, requestDigestFromText, requestDigestPrefix,
    withoutFields,
} from './digest';
export type { CanonicalRequest } from './digest';
export { fieldFingerprints, fieldKeyBytes, fieldKeyObject, maxFingerprintFields, maxFingerprintNameBytes } from './fieldprints';
export type { FieldPrints } from './fieldprints';
export { TaskKey, maxBusinessIdBytes, maxNameBytes } from './key';
export {
    DatabaseUnavailableError, IdemError, InvalidArgumentError, LostOwnershipError, NoRecordError, NotPrimaryError,
    RefusedError, TaskFailure, isConnectionError, translateError,
} from './errors';
export type { FailureClass } from './errors';
export { TaskStore, limits, quoteSchema } from './store';
export type { ClaimResult, Decision, FailResult, Queryable, StoreOptions } from './store';
export { ceilingAfter, defaultRetryPolicy, delayAfter } from './retrypolicy';
export type { RetryPolicy } from './retrypolicy';
export { outcomeOfClaim, runTask } from './runner';
export type { DownstreamCall, RecordFunction, RunOptions, RunOutcome, RunOutcomeKind, TaskContext, TaskFunction } from './runner';
export { CounterBatchRefused, CounterFlusher, OutcomeCounters, outcomes } from './counters';
export type { Outcome } from './counters';
export { clientConfig, parseKeywordValue } from './conninfo';
export { connect, connectionBroken } from './connect';
export { Redriver, finishOutcome, redrive, redriveChannel } from './redrive';
export type { FinishOutcome, RedriveCallRecord, RedriveContext, RedriveItem, RedriveOptions, RedriveTask, RedriverOptions, RunItem } from './redrive';
