// Preloaded into the load suite's server (NODE_OPTIONS=--expose-gc --require this file): SIGUSR2 runs a full
// garbage collection, so the suite compares resident memory after a full collection at warm-up and at the
// end (what is still held, not how far V8 let its heap grow between collections). With LOAD_GC_REPORT set
// to a file, each collection appends process.memoryUsage() there as a JSON line (the suite prints the
// breakdown). Test scaffolding only.
'use strict';
const fs = require('node:fs');
if (typeof global.gc === 'function') {
  process.on('SIGUSR2', () => {
    global.gc();
    global.gc();
    const report = process.env.LOAD_GC_REPORT;
    if (report) fs.appendFileSync(report, `${JSON.stringify(process.memoryUsage())}\n`);
  });
}
