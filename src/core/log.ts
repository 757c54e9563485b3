/** The logger port: the CLI writes to stderr, the extension to an output channel. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, err?: unknown): void;
}

/** A logger that drops everything (tests that do not read logs). */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
