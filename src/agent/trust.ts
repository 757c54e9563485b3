import { closest } from 'fastest-levenshtein';
import type { AnyTool, TrustCategory } from '../tools/defineTool';
import { TRUST_LEVELS, type AgentContextConfig, type TrustLevel } from './config';

/** A trust category's default level and the levels an override may set (agent-context spec, section 5). */
export interface CategoryRule {
  default: TrustLevel | 'config_default';
  /** levels an override may choose besides the default; empty: no override allowed */
  overridable: readonly TrustLevel[];
}

/**
 * The spec's "Default trust by category" table, with Marginalia's two extra categories: `create` (other
 * creations: sources, folders, cases; default `trust.default_level`, Suggest unless configured) and
 * `guidance` / `approval` (answers without changing the project; always Autonomous).
 */
export const CATEGORY_RULES: Record<TrustCategory, CategoryRule> = {
  read: { default: 'auto', overridable: [] },
  search: { default: 'auto', overridable: [] },
  report: { default: 'auto', overridable: ['notify'] },
  create_code: { default: 'suggest', overridable: ['notify', 'auto'] },
  apply_code: { default: 'notify', overridable: ['suggest', 'auto'] },
  rename: { default: 'suggest', overridable: ['notify'] },
  delete: { default: 'require', overridable: ['suggest'] },
  merge: { default: 'require', overridable: ['suggest'] },
  bulk: { default: 'require', overridable: [] },
  create: { default: 'config_default', overridable: ['auto', 'notify', 'suggest', 'require'] },
  guidance: { default: 'auto', overridable: [] },
  approval: { default: 'auto', overridable: [] },
  // update_memo: the capability table says Auto; a researcher may want to see (notify) or decide (suggest) memo writes
  memo: { default: 'auto', overridable: ['notify', 'suggest'] },
};

/**
 * Tools whose level is locked in the control panel (spec section 5): they can never be set below the
 * level the spec allows for their category (Suggest for delete and merge).
 */
export const LOCKED_TOOLS: Readonly<Record<string, TrustLevel>> = { delete_code: 'suggest', merge_codes: 'suggest', resolve_merge_conflict: 'require' };

/** Index of a level in strength order (auto 0 .. require 3). */
export function strength(l: TrustLevel): number {
  return TRUST_LEVELS.indexOf(l);
}

/** The stronger of two levels. */
export function stronger(a: TrustLevel, b: TrustLevel): TrustLevel {
  return strength(a) >= strength(b) ? a : b;
}

/** True when `name` matches `pattern`: an exact tool name, or a glob with `*` (e.g. `search_*`). */
export function matchesPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  let re = globCache.get(pattern);
  if (!re) {
    re = new RegExp(
      `^${pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    if (globCache.size >= 256) globCache.clear();
    globCache.set(pattern, re);
  }
  return re.test(name);
}
/** Compiled globs of {@link matchesPattern} (the trust decision matches every override pattern on every call). */
const globCache = new Map<string, RegExp>();

/** How a tool's level came about, for the audit log and the settings UI. */
export interface TrustDecision {
  level: TrustLevel;
  category: TrustCategory;
  /** 'default', 'override:<pattern>', 'session' (the session asked for stricter), 'local' (the researcher) */
  source: string;
  locked: boolean;
}

/**
 * The trust layer: maps each tool to its level from its category's default, the configured overrides
 * (exact names win over globs; a more specific glob over a shorter one) and the session's own floor.
 */
export class TrustPolicy {
  constructor(
    private readonly config: () => AgentContextConfig,
    private readonly tools: readonly AnyTool[],
  ) {}

  /**
   * Why an override of `pattern` to `level` is not allowed, or undefined when it is: the level must be
   * the default or one of the allowed overrides of the category of EVERY tool the pattern matches, and
   * locked tools may not go below their lock. A pattern that matches no tool is refused too (a misspelt
   * `aply_code: suggest` would otherwise leave the agent coding unsupervised), naming the nearest tool name
   * by Levenshtein distance (fastest-levenshtein).
   */
  static checkOverride(tools: readonly AnyTool[], pattern: string, level: TrustLevel, defaultLevel: TrustLevel = 'suggest'): string | undefined {
    const matched = tools.filter((t) => matchesPattern(pattern, t.name));
    if (matched.length === 0) {
      const names = tools.map((t) => t.name);
      if (names.length === 0) return 'names no tool';
      if (!pattern.includes('*')) return `names no tool (did you mean ${closest(pattern, names)}?)`;
      // a glob: the nearest of the tools' name prefixes (`search_*`, `list_*`, ...) to its literal start
      const prefixes = [...new Set(names.map((n) => n.slice(0, n.indexOf('_') + 1)).filter(Boolean))];
      return `matches no tool (did you mean ${closest(pattern.slice(0, pattern.indexOf('*')), prefixes)}*?)`;
    }
    for (const t of matched) {
      const lock = LOCKED_TOOLS[t.name];
      if (lock && strength(level) < strength(lock)) return `${t.name} is locked at ${lock} or stricter (spec: its level is locked)`;
      const rule = CATEGORY_RULES[t.trust];
      const def = rule.default === 'config_default' ? defaultLevel : rule.default;
      if (level !== def && !rule.overridable.includes(level)) {
        const allowed = [def, ...rule.overridable].join(', ');
        return `${t.name} (${t.trust}) may be ${allowed}${rule.overridable.length === 0 ? ' only: this category cannot be overridden' : ''}`;
      }
    }
    return undefined;
  }

  /** The level for `tool` when called by a session whose own floor is `sessionFloor`. */
  decide(tool: AnyTool, sessionFloor: TrustLevel = 'auto'): TrustDecision {
    const cfg = this.config();
    const rule = CATEGORY_RULES[tool.trust];
    let level: TrustLevel = rule.default === 'config_default' ? cfg.trust.default_level : rule.default;
    let source = 'default';
    const patterns = Object.keys(cfg.trust.overrides).filter((p) => matchesPattern(p, tool.name));
    if (patterns.length > 0) {
      // exact name first, then the longest glob
      const best = patterns.sort((a, b) => Number(b === tool.name) - Number(a === tool.name) || b.length - a.length)[0] as string;
      const wanted = cfg.trust.overrides[best] as TrustLevel;
      if (!TrustPolicy.checkOverride(this.tools, best, wanted, cfg.trust.default_level)) {
        level = wanted;
        source = `override:${best}`;
      }
    }
    const lock = LOCKED_TOOLS[tool.name];
    if (lock && strength(level) < strength(lock)) level = lock;
    if (strength(sessionFloor) > strength(level)) {
      level = sessionFloor;
      source = 'session';
    }
    return { level, category: tool.trust, source, locked: lock !== undefined };
  }

  /**
   * Every tool's decision (for `get_trust_levels` and the settings view). Researcher-only tools (erase_source)
   * are left out: no trust level lets an agent call them.
   */
  table(): (TrustDecision & { tool: string })[] {
    return this.tools.filter((t) => (t.audience ?? 'agents') === 'agents' && !t.researcherOnly).map((t) => ({ tool: t.name, ...this.decide(t) }));
  }
}
