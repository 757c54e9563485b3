/** The logger port: the CLI writes to stderr, the extension to an output channel. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, err?: unknown): void;
}

/** A logger that drops everything (tests that do not read logs). */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * A logger writing one line per message to stderr: `<ISO time> <level> <prefix><message>`; an error's stack
 * follows its message. For the CLI's commands (`prefix` e.g. "marginalia-mcp: ").
 */
export function stderrLogger(prefix = ''): Logger {
  const line = (level: string, msg: string) => process.stderr.write(`${new Date().toISOString()} ${level} ${prefix}${msg}\n`);
  return {
    info: (m) => line('info', m),
    warn: (m) => line('warn', m),
    error: (m, e) => line('error', e instanceof Error ? `${m}: ${e.stack ?? e.message}` : m),
  };
}
