/**
 * Agent calls take turns, the researcher never waits for them (issue 14 item 4: the researcher is never refused or
 * kept waiting behind agents). Node answers requests in the order it reads them, and most tool calls run
 * synchronously, so 32 agents calling back to back would put a researcher's approval behind every call already
 * read. Here each agent call starts in a turn of its own of Node's event loop (one per `setImmediate`, first come
 * first served): between two agent calls the loop reads new requests, and a researcher's call, which never waits
 * here, runs at once. An agent call waits one loop turn per agent call ahead of it (microseconds when idle).
 */
export class AgentTurns {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves when it is this agent call's turn (FIFO; one per event-loop turn). */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /** How many agent calls wait for their turn. */
  get queued(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}
