import type { HistoryView, SnapshotItem } from '../history/historyView';
import type { CommandTable } from './table';

/**
 * The History view's commands (`marginalia.history.*` but Configure Remote and Sync, which are in
 * src/ui/history/syncCommands.ts): Initialize, Refresh, and on a snapshot node Show Changes, Show Raw Diff and
 * Restore (without a node they do nothing, except Show Raw Diff, which takes the snapshot whose changes
 * the active editor shows).
 */
export function historyCommands(history: HistoryView): CommandTable {
  return {
    'marginalia.history.initialize': () => history.initialize(),
    'marginalia.history.refresh': () => history.refresh(),
    'marginalia.history.showChanges': (s?: SnapshotItem) => (s ? history.showChanges(s) : undefined),
    'marginalia.history.showRawDiff': (s?: SnapshotItem) => history.showRawDiff(s),
    'marginalia.history.restore': (s?: SnapshotItem) => (s ? history.restore(s) : undefined),
  };
}
