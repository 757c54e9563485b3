/** Re-exports the adapter kit's subscription helpers (src/agent/kit/subscriptions.ts) for existing imports. */
export { MAX_PATTERNS, parsePatterns, parseSeq, ResumableSubscription, type StreamSink } from '../../agent/kit/subscriptions';
