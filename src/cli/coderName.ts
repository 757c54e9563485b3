import { execFileSync } from 'node:child_process';
import * as os from 'node:os';

/**
 * The researcher's coder name for headless use (issue 14, item 1): `--coder NAME`, else the environment's
 * `MARGINALIA_CODER`, else git's `user.name` (global or of `cwd`'s repository), else the OS user name, else
 * "researcher". VS Code uses `marginalia.coder.name` first (ui/host/settings.ts) and falls back to this.
 * Whitespace is trimmed; at most 100 code points are kept (the codebook's name limit).
 */
export function researcherCoderName(opts: { flag?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): string {
  const env = opts.env ?? process.env;
  const pick = [opts.flag, env.MARGINALIA_CODER, gitUserName(opts.cwd), osUserName()].map((v) => v?.trim()).find((v) => !!v);
  return [...(pick ?? 'researcher')].slice(0, 100).join('');
}

const gitNames = new Map<string, string | undefined>();

/** git's configured `user.name`, or undefined when git is missing or has none (a 2 s limit; asked once per folder). */
function gitUserName(cwd?: string): string | undefined {
  const key = cwd ?? '';
  if (gitNames.has(key)) return gitNames.get(key);
  let name: string | undefined;
  try {
    name = execFileSync('git', ['config', 'user.name'], { cwd, encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    name = undefined;
  }
  gitNames.set(key, name);
  return name;
}

function osUserName(): string | undefined {
  try {
    return os.userInfo().username;
  } catch {
    return undefined;
  }
}
