/** The REST adapter's event routes: `GET /events/stream` (server-sent events) and `GET /events/history`. */
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { ok } from '../../core/envelope';
import { ToolError } from '../../core/errors';
import type { EventRecord } from '../../domain/events';
import { blindFilter, openSubscription, parsePatterns, parseSeq } from '../../agent/kit';
import type { Caller } from '../../agent/pipeline';
import { send } from '../http/httpServer';
import {
  HISTORY_DEFAULT_LIMIT,
  HISTORY_MAX_LIMIT,
  MAX_SSE_STREAMS,
  refuseUnknownQuery,
  single,
  SSE_KEEP_ALIVE_MS,
  SSE_RETRY_MS,
  type Query,
  type RestKit,
} from './restKit';

/** `GET /events/stream` (server-sent events) and `GET /events/history`. */
export function mountEvents(app: express.Express, kit: RestKit): void {
  const { agent, streams, route, opts } = kit;
  // ---- events ------------------------------------------------------------------------------------

  app.get(
    '/events/history',
    route((req, res, caller) => {
      const q = req.query as Query;
      refuseUnknownQuery(q, ['since', 'limit', 'patterns', 'pattern']);
      const since = parseSeq(single(q, 'since'), 'since') ?? 0;
      const limitText = single(q, 'limit');
      const limit = limitText === undefined ? HISTORY_DEFAULT_LIMIT : Number(limitText);
      if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT) throw new ToolError('INVALID_ARGUMENTS', `limit must be 1..${HISTORY_MAX_LIMIT}`);
      const patterns = [...parsePatterns(q.patterns), ...parsePatterns(q.pattern)];
      // a blind coder's history holds only their own codings' events, as the streams (src/agent/kit/subscriptions.ts)
      const page = agent.history(since, limit + 1, patterns).filter(blindFilter(kit.pipeline, caller));
      const events = page.slice(0, limit);
      const last = events[events.length - 1]?.metadata.sequence_number ?? since;
      send(res, 200, ok({ since, count: events.length, has_more: page.length > limit, last_seq: last, head_seq: agent.headSeq(), patterns, events }));
    }),
  );

  app.get(
    '/events/stream',
    (req: Request, _res: Response, next: NextFunction) => {
      // EventSource cannot set headers: ?session_id= names the session (the token may come as ?token=)
      const sid = (req.query as Query).session_id;
      if (typeof sid === 'string' && !req.get('x-marginalia-session')) req.headers['x-marginalia-session'] = sid;
      next();
    },
    route((req, res, caller) => {
      const q = req.query as Query;
      refuseUnknownQuery(q, ['patterns', 'pattern', 'since', 'token', 'session_id']);
      if (streams.size >= MAX_SSE_STREAMS)
        throw new ToolError('SESSION_LIMIT', `At most ${MAX_SSE_STREAMS} event streams may be open at once; close one first`);
      const patterns = [...parsePatterns(q.patterns), ...parsePatterns(q.pattern)];
      // Last-Event-ID (what EventSource resends when it reconnects) wins over ?since= (which stays in the URL)
      const header = req.get('last-event-id');
      const from = parseSeq(header, 'Last-Event-ID') ?? parseSeq(single(q, 'since'), 'since');
      openStream(req, res, caller, patterns, from ?? agent.headSeq());
    }),
  );

  function openStream(req: Request, res: Response, caller: Caller, patterns: string[], fromSeq: number): void {
    res.status(200);
    res.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    let ended = false;
    const write = (text: string) => !ended && res.write(text);
    // the adapter kit's subscription: default patterns, events_per_second pace, blind coding, the session's list
    const kitSub = openSubscription(agent, kit.pipeline, {
      caller,
      patterns,
      fromSeq,
      sink: {
        event: (e: EventRecord) => write(`id: ${e.metadata.sequence_number}\nevent: ${e.event_type}\ndata: ${JSON.stringify(e)}\n\n`) !== false,
        overflow: (n) => void write(`event: overflow\ndata: ${JSON.stringify({ ...n, subscription_id: sub.id, resumed: true })}\n\n`),
      },
    });
    const sub = kitSub.sub;
    // the first lines: how long to wait before reconnecting, and what this stream is; then the events
    write(
      `retry: ${SSE_RETRY_MS}\n: marginalia event stream; session ${caller.session_id}; subscription ${sub.id}; after sequence ${fromSeq}; patterns ${sub.effectivePatterns.join(',')}\n\n`,
    );
    const onDrain = () => sub.resume();
    res.on('drain', onDrain);
    sub.open();
    const keepAlive = setInterval(() => {
      // an open stream is activity; a session that ended (destroyed, expired) ends its streams
      try {
        agent.sessions.touch(caller.session_id);
      } catch {
        end();
        return;
      }
      write(': keep-alive\n\n');
    }, opts.keepAliveMs ?? SSE_KEEP_ALIVE_MS);
    keepAlive.unref();
    // the session ending (destroyed, ended by the researcher, its credential revoked, reclaimed) ends the stream at once
    const unwatch = agent.sessions.watch(caller.session_id, () => end());
    const end = () => {
      if (ended) return;
      ended = true;
      unwatch();
      clearInterval(keepAlive);
      kitSub.close();
      streams.delete(end);
      res.off('drain', onDrain);
      res.end();
    };
    streams.add(end);
    // the response closes when the client goes away (IncomingMessage's own 'close' fires earlier on Node >= 16)
    res.on('close', end);
  }
}
