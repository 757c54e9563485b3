// Preloaded into the load suite's server (NODE_OPTIONS=--expose-gc --require this file): SIGUSR2 runs a full
// garbage collection, so the suite compares resident memory after a full collection at warm-up and at the
// end (what is still held, not how far V8 let its heap grow between collections). Test scaffolding only.
'use strict';
if (typeof global.gc === 'function') {
  process.on('SIGUSR2', () => {
    global.gc();
    global.gc();
  });
}
