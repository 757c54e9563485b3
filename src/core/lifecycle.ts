/**
 * vscode-free disposables, structurally identical to `vscode.Disposable`
 * (after VS Code's `base/common/lifecycle.ts`).
 */
export interface Disposable {
  dispose(): void | Promise<void>;
}

/** Wraps a function as a Disposable that runs once. */
export function toDisposable(fn: () => void | Promise<void>): Disposable {
  let done = false;
  return {
    dispose: () => {
      if (done) return undefined;
      done = true;
      return fn();
    },
  };
}

/**
 * Owns disposables and disposes them in reverse order of addition. Adding to a disposed store disposes
 * the item at once.
 */
export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  /** Adds `d` and returns it, so creation and registration fit on one line. */
  add<T extends Disposable>(d: T): T {
    if (this.disposed) void d.dispose();
    else this.items.push(d);
    return d;
  }

  /** Disposes every item, last added first; awaits async disposals in order. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    while (this.items.length > 0) {
      const d = this.items.pop();
      await d?.dispose();
    }
  }
}
