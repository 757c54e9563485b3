import { parse } from 'yaml';
import { z } from 'zod';
import { ToolError } from '../core/errors';

/** The four trust levels of the agent-context spec (section 5), weakest first. */
export const TRUST_LEVELS = ['auto', 'notify', 'suggest', 'require'] as const;
/** One of {@link TRUST_LEVELS}. */
export type TrustLevel = (typeof TRUST_LEVELS)[number];

const level = z.enum(TRUST_LEVELS);
const port = z.number().int().min(0).max(65535);

/**
 * The `agent_context` section of `.marginalia/config.yaml`, with every key of the agent-context spec
 * (section 8) and its default, plus Marginalia's own keys (marked). Unknown keys are refused, so a typo
 * is an error and not a silently ignored setting.
 */
export const agentContextSchema = z
  .strictObject({
    protocols: z
      .strictObject({
        mcp: z
          .strictObject({ enabled: z.boolean().default(true), transport: z.enum(['stdio', 'http']).default('http'), port: port.default(3000) })
          .prefault({}),
        rest: z.strictObject({ enabled: z.boolean().default(true), host: z.string().default('localhost'), port: port.default(8080) }).prefault({}),
        websocket: z.strictObject({ enabled: z.boolean().default(true), port: port.default(8081) }).prefault({}),
        /** Marginalia: the gRPC adapter (mutual TLS) */
        grpc: z.strictObject({ enabled: z.boolean().default(false), port: port.default(50051) }).prefault({}),
      })
      .prefault({}),
    sessions: z
      .strictObject({
        timeout_minutes: z
          .number()
          .positive()
          .max(7 * 24 * 60)
          .default(30),
        max_concurrent: z.number().int().min(1).max(1000).default(5),
        heartbeat_interval_seconds: z.number().positive().max(3600).default(30),
      })
      .prefault({}),
    trust: z
      .strictObject({
        default_level: level.default('suggest'),
        /** tool name or glob (`search_*`) -> level; checked against each category's allowed overrides */
        overrides: z.record(z.string().min(1), level).default({ apply_code: 'notify', delete_code: 'require', 'search_*': 'auto' }),
      })
      .prefault({}),
    approvals: z
      .strictObject({
        /** Marginalia: minutes before a pending request is rejected automatically (spec: 5) */
        timeout_minutes: z
          .number()
          .positive()
          .max(24 * 60)
          .default(5),
        /** Marginalia: most requests pending at once (spec: 10) */
        max_pending: z.number().int().min(1).max(1000).default(10),
        /** Marginalia: most requests pending at once from one agent credential (all its sessions); issue 14 item 4 */
        max_pending_per_agent: z.number().int().min(1).max(1000).default(5),
        /**
         * Marginalia: the pace at which an agent is told to poll get_approval_status, in milliseconds (the 202
         * answer's `poll_after_ms`, HTTP `Retry-After`); polls of its own request at this pace never spend its rate budget
         */
        poll_after_ms: z.number().int().min(10).max(60_000).default(2000),
      })
      .prefault({}),
    rate_limits: z
      .strictObject({
        requests_per_minute: z.number().int().min(1).max(1_000_000).default(60),
        mutations_per_minute: z.number().int().min(1).max(1_000_000).default(30),
        /** Marginalia: events delivered to one subscriber per second before buffering (spec: 100) */
        events_per_second: z.number().int().min(1).max(1_000_000).default(100),
      })
      .prefault({}),
    events: z
      .strictObject({
        buffer_size: z.number().int().min(1).max(1_000_000).default(1000),
        batch_interval_ms: z.number().int().min(0).max(60_000).default(100),
        default_subscriptions: z.array(z.string().min(1)).default(['coding.*', 'source.*', 'analysis.*']),
      })
      .prefault({}),
    /**
     * Marginalia: folders (besides the project's folder and, in VS Code, the workspace folders) where agents'
     * import and export paths may lie; relative paths are resolved against the project's folder, `~` is the
     * home folder. The researcher's own calls may use any path.
     */
    allowed_paths: z.array(z.string().min(1).max(4096)).max(100).default([]),
    audit: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** relative paths are resolved against the project's folder */
        log_path: z.string().min(1).default('.marginalia/audit.jsonl'),
        /**
         * true (the spec's default): each call's arguments, with strings longer than 200 code points recorded as
         * `{"length": n, "sha256": "..."}` (Marginalia: a participant's transcript is not copied into the log);
         * `full`: the arguments exactly as sent; false: no arguments
         */
        include_payload: z.union([z.boolean(), z.literal('full')]).default(true),
      })
      .prefault({}),
  })
  .prefault({});

/** The validated configuration with every default filled in. */
export type AgentContextConfig = z.output<typeof agentContextSchema>;

/** The configuration when no file exists: every default of the spec. */
export function defaultConfig(): AgentContextConfig {
  return agentContextSchema.parse({});
}

/**
 * Parses `.marginalia/config.yaml` text: a YAML document whose `agent_context` key holds the settings
 * (an empty document gives the defaults). Trust overrides are checked against the spec's allowed
 * overrides and locks (see trust.ts `checkOverride`).
 *
 * Errors: INVALID_CONFIG with one line per problem, naming the key path (e.g.
 * `agent_context.trust.default_level: must be one of auto, notify, suggest, require`).
 */
export function parseConfig(text: string, checkOverride: (pattern: string, level: TrustLevel) => string | undefined): AgentContextConfig {
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (e) {
    throw new ToolError('INVALID_CONFIG', `config.yaml is not valid YAML: ${(e as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ToolError('INVALID_CONFIG', 'config.yaml must be a mapping with an agent_context key');
  const extra = Object.keys(doc).filter((k) => k !== 'agent_context');
  if (extra.length > 0) throw new ToolError('INVALID_CONFIG', `config.yaml: unknown top-level key(s) ${extra.join(', ')}; settings go under agent_context`);
  const parsed = agentContextSchema.safeParse((doc as { agent_context?: unknown }).agent_context ?? {});
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `agent_context.${i.path.map(String).join('.')}: ${i.message}`);
    throw new ToolError('INVALID_CONFIG', `config.yaml: ${lines.join('; ')}`, { issues: lines });
  }
  const problems: string[] = [];
  for (const [pattern, lvl] of Object.entries(parsed.data.trust.overrides)) {
    const why = checkOverride(pattern, lvl);
    if (why) problems.push(`agent_context.trust.overrides.${pattern}: ${why}`);
  }
  if (problems.length > 0) throw new ToolError('INVALID_CONFIG', `config.yaml: ${problems.join('; ')}`, { issues: problems });
  return parsed.data;
}
