import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError, type ErrorCode } from './errors';

/** What a tool does with a path: reads a file, or writes one. */
export type PathAccess = 'read' | 'write';

/**
 * The rule agents' file paths follow, as messages and documentation state it (docs/agents.md, "File
 * paths"; the tool descriptions).
 */
export const AGENT_PATH_RULE =
  "an agent may read and write files only inside the project's folder, the VS Code workspace folders, and the folders the researcher listed " +
  '(agent_context.allowed_paths in .marginalia/config.yaml, or marginalia serve --allow-path); symbolic links are followed before the check, ' +
  "and nothing is written inside the project's .marginalia folder";

/** The short form of {@link AGENT_PATH_RULE} that tool descriptions carry. */
export const AGENT_PATH_RULE_SHORT =
  "For agents, the path must lie (after following symbolic links) in the project's folder, a workspace folder or a folder the researcher allowed (agent_context.allowed_paths); the researcher's own calls may use any path.";

/** The outcome of {@link PathPolicy.resolve}: the real path to use, or why the path is refused. */
export type PathResolution = { ok: true; real: string } | { ok: false; reason: string; real: string };

const caseInsensitive = process.platform === 'win32' || process.platform === 'darwin';
const key = (p: string) => (caseInsensitive ? p.toLowerCase() : p);

/** `~` and `~/x` as the user's home folder. */
function expandHome(p: string): string {
  if (p === '~') return os.homedir();
  if (p.startsWith('~/') || p.startsWith('~\\')) return path.join(os.homedir(), p.slice(2));
  return p;
}

/**
 * The real path of `p` (absolute) with every symbolic link followed: of the file itself when it exists; of
 * the target of a dangling link (where writing through it would land); else of its nearest existing ancestor
 * folder with the rest appended (a file about to be written, or a missing one, is judged by where it would
 * be). Never throws.
 */
export function realPathOf(p: string, depth = 0): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync.native(abs);
  } catch {
    // missing (or unreadable): a dangling link is judged by its target; else resolve the nearest existing ancestor
  }
  try {
    if (depth < 40 && fs.lstatSync(abs).isSymbolicLink()) return realPathOf(path.resolve(path.dirname(abs), fs.readlinkSync(abs)), depth + 1);
  } catch {
    // not there at all
  }
  const rest: string[] = [];
  let dir = abs;
  for (;;) {
    const parent = path.dirname(dir);
    rest.unshift(path.basename(dir));
    if (parent === dir) return abs;
    dir = parent;
    try {
      return path.join(fs.realpathSync.native(dir), ...rest);
    } catch {
      // keep climbing
    }
  }
}

/** True when `real` is `root` or lies inside it (both real, absolute paths). */
export function isInside(real: string, root: string): boolean {
  const r = key(real);
  const base = key(root);
  if (r === base) return true;
  return r.startsWith(base.endsWith(path.sep) ? base : `${base}${path.sep}`);
}

/**
 * Where the files an agent names may be (docs/agents.md, "File paths"): a list of root
 * folders, each resolved to its real path, plus folders inside them that are never written (the project's
 * `.marginalia`). The researcher's policy is unrestricted. Built by the pipeline once per call
 * (ToolPipeline.pathPolicy) from the project's folder, the host's allowed roots (VS Code workspace folders,
 * `marginalia serve --allow-path`) and `agent_context.allowed_paths`, and used by every stage of that call.
 *
 * One resolution per path and call: a policy remembers the real path of each path it resolved
 * ({@link realPath}), so the pipeline's check before the trust decision, the dry run, the substitution of real
 * paths before the tool runs and the tool's own checks (export_data's output rules,
 * src/exchange/exports.ts) follow the path's links once. A policy lives for one call; a call approved later
 * gets a new one, so a path swapped for a link in the meantime is judged again.
 */
export class PathPolicy {
  private resolved: { roots: readonly string[]; noWrite: readonly string[] } | null = null;
  /** path as given -> its real path ({@link realPathOf}), for this policy's call */
  private readonly reals = new Map<string, string>();

  private constructor(
    /** null: unrestricted; else computes the real roots and noWrite folders, once, on first use */
    private readonly compute: (() => { roots: readonly string[]; noWrite: readonly string[] }) | null,
  ) {}

  /** The researcher's policy: every path is allowed. */
  static unrestricted(): PathPolicy {
    return new PathPolicy(null);
  }

  /**
   * A policy allowing `roots` (absolute paths; `~` is the home folder; relative ones are resolved against
   * `base`, when given, else dropped) and refusing writes inside `noWrite`. Roots are resolved with symbolic
   * links followed (on first use, so a call that names no path costs no file-system lookups); duplicates
   * are dropped.
   */
  static within(roots: Iterable<string>, opts: { base?: string; noWrite?: Iterable<string> } = {}): PathPolicy {
    const rawRoots = [...roots];
    const rawNoWrite = [...(opts.noWrite ?? [])];
    return PathPolicy.deferred(() => ({ roots: rawRoots, base: opts.base, noWrite: rawNoWrite }));
  }

  /**
   * Like {@link within}, with the roots, base and noWrite folders computed by `make` on first use (the
   * pipeline builds a policy for every call; most calls name no path and never use it).
   */
  static deferred(make: () => { roots: Iterable<string>; base?: string; noWrite?: Iterable<string> }): PathPolicy {
    return new PathPolicy(() => {
      const { roots, base, noWrite } = make();
      const real = new Set<string>();
      for (const raw of roots) {
        if (typeof raw !== 'string' || raw.trim() === '') continue;
        const p = expandHome(raw.trim());
        if (!path.isAbsolute(p) && !base) continue;
        real.add(realPathOf(path.isAbsolute(p) ? p : path.resolve(base as string, p)));
      }
      return { roots: [...real], noWrite: [...(noWrite ?? [])].map((p) => realPathOf(p)) };
    });
  }

  private get resolvedFolders(): { roots: readonly string[]; noWrite: readonly string[] } {
    if (!this.compute) return { roots: [], noWrite: [] };
    this.resolved ??= this.compute();
    return this.resolved;
  }

  /**
   * The real path of `p` ({@link realPathOf}: absolute, every symbolic link followed), resolved once per
   * policy: later calls with the same `p`, or with the real path itself, answer from memory. For
   * unrestricted policies too (the researcher's exports are judged by where they land).
   */
  realPath(p: string): string {
    let r = this.reals.get(p);
    if (r === undefined) {
      r = realPathOf(p);
      this.reals.set(p, r);
      this.reals.set(r, r);
    }
    return r;
  }

  /** Real absolute folders an agent's paths must lie in; null: unrestricted. */
  get roots(): readonly string[] | null {
    return this.compute ? this.resolvedFolders.roots : null;
  }

  /** Real absolute folders inside the roots that are never written. */
  get noWrite(): readonly string[] {
    return this.resolvedFolders.noWrite;
  }

  /** True unless this is the researcher's unrestricted policy. */
  get restricted(): boolean {
    return this.compute !== null;
  }

  /** True when the real path `real` lies in one of the roots (always true when unrestricted). */
  allows(real: string): boolean {
    const roots = this.roots;
    return roots === null || roots.some((root) => isInside(real, root));
  }

  /**
   * Resolves `p` for `access`: relative paths are returned as they are (the tools refuse them with their own
   * message); an absolute path is resolved with symbolic links followed ({@link realPathOf}) and must lie in a
   * root, and a write must not land in a `noWrite` folder. Unrestricted: the path as given.
   */
  resolve(p: string, access: PathAccess): PathResolution {
    const roots = this.roots;
    if (roots === null || !path.isAbsolute(p)) return { ok: true, real: p };
    const real = this.realPath(p);
    const via = real === path.resolve(p) ? '' : ` (it resolves to ${real})`;
    if (!this.allows(real)) {
      return {
        ok: false,
        real,
        reason: `"${p}"${via} is outside the folders an agent may use: ${AGENT_PATH_RULE}. Allowed here: ${roots.join(', ') || 'none'}`,
      };
    }
    if (access === 'write' && this.noWrite.some((d) => isInside(real, d))) {
      return { ok: false, real, reason: `"${p}"${via} is inside the project's .marginalia folder, which agents never write to` };
    }
    return { ok: true, real };
  }

  /**
   * Like {@link resolve}, but throws ToolError `code` (the calling tool's own code: IMPORT_FAILED,
   * EXPORT_FAILED, SOURCE_IMPORT_FAILED, ...) with the reason, `details.path` and `details.allowed_roots`
   * when refused. Returns the real path to use.
   */
  check(p: string, access: PathAccess, code: ErrorCode): string {
    const r = this.resolve(p, access);
    if (!r.ok) throw new ToolError(code, `Refused: ${r.reason}`, { path: p, rule: 'agent_paths', allowed_roots: this.roots });
    return r.real;
  }
}
