/**
 * The shape of the one command table (rust-analyzer's `editors/code` style): command id -> handler. Each area
 * of the extension (coding, codes, sources, cases, agents, ...) builds its own table; {@link concatTables} joins
 * them into THE table that `registerCommands` (src/ui/commands/index.ts) registers, refusing an id two areas
 * both claim. vscode-free, so plain-Node tests can load it.
 */

/** A command handler: VS Code passes the command's arguments (menus pass the clicked tree node). */
export type CommandHandler = (...args: any[]) => unknown;

/** Command id (`marginalia.<area>.<action>`) -> handler. */
export type CommandTable = Record<string, CommandHandler>;

/**
 * Joins the areas' tables, in order, into one. Throws an Error naming the id and both areas when two areas
 * define the same command (a spread would silently keep the later handler).
 */
export function concatTables(areas: Readonly<Record<string, CommandTable>>): CommandTable {
  const table: CommandTable = {};
  const owner = new Map<string, string>();
  for (const [area, commands] of Object.entries(areas)) {
    for (const [id, handler] of Object.entries(commands)) {
      const first = owner.get(id);
      if (first !== undefined) throw new Error(`The command ${id} is in the tables of both ${first} and ${area}.`);
      owner.set(id, area);
      table[id] = handler;
    }
  }
  return table;
}
