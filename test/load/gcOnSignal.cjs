// Preloaded into the load suite's server (NODE_OPTIONS=--expose-gc --require this file): SIGUSR2 runs a full
// garbage collection, so the suite compares resident memory after a full collection at warm-up and at the
// end (what is still held, not how far V8 let its heap grow between collections). With LOAD_GC_REPORT set
// to a file, two seconds after each collection, process.memoryUsage() and the resident
// memory by kind of mapping are appended there as a JSON line (the suite prints the
// breakdown). Test scaffolding only.
'use strict';
const fs = require('node:fs');
/** Resident kB by kind of mapping (Linux /proc/self/smaps): the brk heap, anonymous mappings by size class, files. */
function residentByMapping() {
  const out = {};
  let name = '';
  let size = 0;
  try {
    for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
      const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (head) {
        name = head[1] || '';
        continue;
      }
      if (line.startsWith('Size:')) size = Number(line.split(/\s+/)[1]);
      if (!line.startsWith('Rss:')) continue;
      const rss = Number(line.split(/\s+/)[1]);
      const kind =
        name === ''
          ? size >= 1024 * 1024
            ? 'anon>=1G'
            : size >= 65536
              ? 'anon64M-1G'
              : size >= 1024
                ? 'anon1-64M'
                : 'anon<1M'
          : name.startsWith('/')
            ? 'file'
            : name;
      out[kind] = (out[kind] || 0) + rss;
    }
  } catch {
    // not Linux
  }
  return out;
}

if (typeof global.gc === 'function') {
  process.on('SIGUSR2', () => {
    global.gc();
    global.gc();
    const report = process.env.LOAD_GC_REPORT;
    // written two seconds later, once the memory the collection freed has been handed back (the suite samples then)
    if (report) setTimeout(() => fs.appendFileSync(report, `${JSON.stringify({ ...process.memoryUsage(), mappings: residentByMapping() })}\n`), 2000);
  });
}
