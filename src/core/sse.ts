/**
 * The one parser of server-sent events (`text/event-stream`): the CLI's forwarding backend
 * (src/adapters/cli/forwardBackend.ts) and `marginalia watch` (src/cli/watchCommand.ts) follow an owner's
 * `GET /events/stream` with it, and the MCP stdio forwarder (src/adapters/mcp/mcpForward.ts) reads the owner's
 * SSE-framed answers with it.
 */
/** One server-sent event: its `id`, `event` name (default `message`) and `data` (lines joined by `\n`). */
export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/**
 * An incremental parser of a `text/event-stream` body (WHATWG HTML, "Server-sent events", 9.2.6):
 * feed it chunks; it calls `onMessage` for each dispatched event and `onComment` for each `:` line.
 * Lines end with `\n`, `\r\n` or `\r`; a field without a colon has an empty value; one space after the
 * colon is dropped; an event with no data lines is not dispatched.
 */
export function createSseParser(onMessage: (m: SseMessage) => void, onComment: (text: string) => void = () => {}): { feed(chunk: string): void } {
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  const line = (l: string) => {
    if (l === '') {
      if (data.length > 0) onMessage({ id, event: event || 'message', data: data.join('\n') });
      data = [];
      event = '';
      return;
    }
    if (l.startsWith(':')) {
      onComment(l.slice(1).trimStart());
      return;
    }
    const colon = l.indexOf(':');
    const field = colon === -1 ? l : l.slice(0, colon);
    let value = colon === -1 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  };
  return {
    feed(chunk: string) {
      buffer += chunk;
      for (;;) {
        const m = /\r\n|\n|\r/.exec(buffer);
        // a lone \r at the end may be the first half of \r\n: wait for more
        if (!m || (m[0] === '\r' && m.index === buffer.length - 1)) break;
        line(buffer.slice(0, m.index));
        buffer = buffer.slice(m.index + m[0].length);
      }
    },
  };
}
