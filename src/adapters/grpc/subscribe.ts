/**
 * The gRPC event streams: Subscribe (a resumable subscription to the event hub, replaying from a sequence
 * number, with overflow notices and back-pressure) and Unsubscribe; an open stream keeps its session alive.
 */
import * as grpc from '@grpc/grpc-js';
import { grpcStatusOf } from '../../agent/errorClasses';
import { openSubscription, parsePatterns } from '../../agent/kit';
import type { Caller } from '../../agent/pipeline';
import { isToolError, ToolError } from '../../core/errors';
import { toProtoEvent, type SubscribeRequest } from './messages';
import { callerOf, identity, type GrpcIdentity, type GrpcServerContext } from './serverContext';

/** Most Subscribe streams open at once per server. */
export const MAX_GRPC_STREAMS = 100;
/** While a Subscribe stream is open its session is touched this often, milliseconds. */
export const GRPC_STREAM_TOUCH_MS = 15_000;

/** The handlers of event streams: Subscribe and Unsubscribe (only the certificate that opened a stream may end it). */
export function streamHandlers(ctx: GrpcServerContext): grpc.UntypedServiceImplementation {
  return {
    Unsubscribe: (
      call: grpc.ServerUnaryCall<{ subscription_id: string }, { subscription_id: string }>,
      callback: grpc.sendUnaryData<{ subscription_id: string }>,
    ) => {
      const id = authenticated(ctx, call, (e) => callback({ code: grpc.status.UNAUTHENTICATED, details: e.message }));
      if (!id) return;
      const s = ctx.streams.get(call.request.subscription_id);
      if (!s || s.fingerprint !== id.fingerprint) {
        callback({ code: grpc.status.NOT_FOUND, details: `No subscription ${call.request.subscription_id.slice(0, 100)} of this certificate` });
        return;
      }
      s.end();
      callback(null, { subscription_id: call.request.subscription_id });
    },

    Subscribe: (call: grpc.ServerWritableStream<SubscribeRequest, Record<string, unknown>>) => subscribe(ctx, call),
  };
}

/**
 * Subscribe: authenticates (UNAUTHENTICATED), resolves the caller and patterns (the code's gRPC status with an
 * `error_code` trailer; SESSION_LIMIT past {@link MAX_GRPC_STREAMS}), then streams `subscribed`, the replay from
 * `since` (default: the newest event) and every later event, until the client cancels, the session ends or the
 * server closes.
 */
function subscribe(ctx: GrpcServerContext, call: grpc.ServerWritableStream<SubscribeRequest, Record<string, unknown>>): void {
  const { agent, streams } = ctx;
  const refuse = (code: number, e: ToolError | Error) => {
    const metadata = new grpc.Metadata();
    if (isToolError(e)) metadata.set('error_code', e.code);
    call.emit('error', { code, details: e.message, metadata });
  };
  const id = authenticated(ctx, call, (e) => refuse(grpc.status.UNAUTHENTICATED, e));
  if (!id) return;
  let caller: Caller;
  let patterns: string[];
  try {
    caller = callerOf(ctx, id, call.request.session_id);
    agent.sessions.touch(caller.session_id);
    patterns = parsePatterns(call.request.patterns);
    if (streams.size >= MAX_GRPC_STREAMS)
      throw new ToolError('SESSION_LIMIT', `At most ${MAX_GRPC_STREAMS} event streams may be open at once; close one first`);
  } catch (e) {
    if (!isToolError(e)) throw e;
    refuse(grpcStatusOf(e.code), e);
    return;
  }
  const since = call.request.since;
  const from = since === undefined || since === null ? agent.headSeq() : Number(since);
  let ended = false;
  const write = (msg: Record<string, unknown>): boolean => {
    if (ended || call.cancelled) return false;
    return call.write(msg);
  };
  // the adapter kit's subscription: default patterns, events_per_second pace, blind coding, the session's list
  const kitSub = openSubscription(agent, ctx.opts.pipeline, {
    caller,
    patterns,
    fromSeq: from,
    sink: {
      event: (e) => write({ event: toProtoEvent(e) }),
      overflow: (n) => void write({ overflow: { last_delivered_seq: n.last_delivered_seq, dropped: n.dropped } }),
    },
  });
  const sub = kitSub.sub;
  const onDrain = () => sub.resume();
  call.on('drain', onDrain);
  const touch = setInterval(() => {
    // an open stream is activity; a session that ended (closed, expired) ends its streams
    try {
      agent.sessions.touch(caller.session_id);
    } catch {
      end(true);
    }
  }, ctx.opts.touchMs ?? GRPC_STREAM_TOUCH_MS);
  touch.unref();
  const end = (finish: boolean) => {
    if (ended) return;
    ended = true;
    clearInterval(touch);
    kitSub.close();
    streams.delete(sub.id);
    call.off('drain', onDrain);
    if (finish && !call.cancelled) call.end();
  };
  streams.set(sub.id, { fingerprint: id.fingerprint, end: () => end(true) });
  call.on('cancelled', () => end(false));
  call.on('close', () => end(false));
  call.on('error', () => end(false));
  // the client learns the subscription id before replayed events arrive
  write({ subscribed: { subscription_id: sub.id, patterns: [...sub.effectivePatterns], from_sequence: from, session_id: caller.session_id } });
  sub.open();
}

/** The caller's identity, or undefined after `refuse` was told why not (UNAUTHORIZED, audited by {@link identity}). */
function authenticated(ctx: GrpcServerContext, call: Parameters<typeof identity>[1], refuse: (e: Error) => void): GrpcIdentity | undefined {
  try {
    return identity(ctx, call);
  } catch (e) {
    refuse(e as Error);
    return undefined;
  }
}
