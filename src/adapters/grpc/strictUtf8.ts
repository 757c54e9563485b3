/**
 * Strings that are not UTF-8 (proto3 requires UTF-8; the decoder would substitute U+FFFD): the raw bytes of every
 * request are walked before decoding, and a request with an ill-formed string field is refused with
 * INVALID_JSON before any handler runs.
 */
import * as grpc from '@grpc/grpc-js';
import type { AgentContext } from '../../agent/agentContext';
import { ToolError } from '../../core/errors';
import { firstInvalidUtf8, type Utf8Problem } from '../../core/strictJson';

/** Marks a request whose raw bytes held a string field that is not UTF-8 (see {@link strictUtf8Service}). */
const BAD_UTF8 = Symbol('marginalia.grpc.invalidUtf8');

/** The first string field of a protobuf message whose bytes are not valid UTF-8. */
export interface InvalidStringField {
  /** the field's name in the proto */
  field: string;
  /** byte offset of the ill-formed sequence within the field's value */
  offset: number;
  /** byte offset of the same byte within the whole message */
  messageOffset: number;
  problem: string;
}

/**
 * Walks the protobuf wire format of one message (protobuf encoding guide: varint tags, wire types 0, 1, 2,
 * 5) and returns the first field of `stringFields` (field number -> name; repeated fields too) whose bytes
 * are not well-formed UTF-8 (proto3 requires string fields to be UTF-8; protobufjs, which grpc-js's
 * proto-loader decodes with, would put U+FFFD instead). Other fields are skipped, not decoded. Returns
 * undefined when every string is UTF-8, and also for a message it cannot walk (the decoder then reports it).
 */
export function firstInvalidStringField(bytes: Uint8Array, stringFields: ReadonlyMap<number, string>): InvalidStringField | undefined {
  let i = 0;
  const n = bytes.length;
  const varint = (): number | undefined => {
    let v = 0;
    let mul = 1;
    for (let k = 0; k < 10 && i < n; k++) {
      const b = bytes[i++] as number;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
    return undefined;
  };
  while (i < n) {
    const tag = varint();
    if (tag === undefined) return undefined;
    const wire = tag % 8;
    const number = Math.floor(tag / 8);
    if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const len = varint();
      if (len === undefined || i + len > n) return undefined;
      const name = stringFields.get(number);
      if (name !== undefined) {
        const p: Utf8Problem | undefined = firstInvalidUtf8(bytes.subarray(i, i + len));
        if (p) return { field: name, offset: p.offset, messageOffset: i + p.offset, problem: p.problem };
      }
      i += len;
    } else return undefined;
  }
  return undefined;
}

/**
 * `service` with each method's request deserializer checking the raw bytes first
 * ({@link firstInvalidStringField} over the request type's string fields): a request with a string that is
 * not UTF-8 is not decoded but marked, and {@link refuseInvalidUtf8} answers it INVALID_ARGUMENT (trailer
 * `error_code: INVALID_JSON`) before any handler runs.
 */
export function strictUtf8Service(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, def] of Object.entries(service)) {
    const type = (def as unknown as { requestType?: { type?: { field?: { name: string; number: number; type: string }[] } } }).requestType?.type;
    const fields = new Map((type?.field ?? []).filter((f) => f.type === 'TYPE_STRING').map((f) => [f.number, f.name] as const));
    out[name] = {
      ...def,
      requestDeserialize: (buf: Buffer) => {
        const bad = fields.size > 0 ? firstInvalidStringField(buf, fields) : undefined;
        if (!bad) return def.requestDeserialize(buf);
        return {
          [BAD_UTF8]: new ToolError(
            'INVALID_JSON',
            `${bad.field} is not valid UTF-8: at byte offset ${bad.offset} of the field (${bad.messageOffset} of the message): ${bad.problem}. Strings must be UTF-8.`,
            {
              reason: 'invalid_utf8',
              field: bad.field,
              byte_offset: bad.offset,
              message_byte_offset: bad.messageOffset,
            },
          ),
        };
      },
    };
  }
  return out as grpc.ServiceDefinition;
}

/**
 * `handlers` with every call whose request {@link strictUtf8Service} marked refused first: INVALID_ARGUMENT
 * with the message and an `error_code: INVALID_JSON` trailer (unary calls through the callback, streams by
 * their error), audited as failed; nothing runs.
 */
export function refuseInvalidUtf8(handlers: grpc.UntypedServiceImplementation, agent: AgentContext): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(handlers)) {
    out[name] = ((
      call: { request?: Record<PropertyKey, unknown>; emit(event: 'error', e: unknown): boolean; getPath?(): string },
      callback?: grpc.sendUnaryData<unknown>,
    ) => {
      const bad = call.request?.[BAD_UTF8];
      if (bad instanceof ToolError) {
        agent.auditRefusal({ route: `grpc ${call.getPath?.() ?? name}`, error_code: bad.code, decision: 'failed' });
        const metadata = new grpc.Metadata();
        metadata.set('error_code', bad.code);
        const error = { code: grpc.status.INVALID_ARGUMENT, details: bad.message, metadata };
        if (callback) callback(error);
        else call.emit('error', error);
        return;
      }
      return (handler as (c: unknown, cb?: unknown) => unknown)(call, callback);
    }) as grpc.UntypedHandleCall;
  }
  return out;
}
