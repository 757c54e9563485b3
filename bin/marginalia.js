#!/usr/bin/env node
'use strict';
require('../dist/cli.js')
  .main(process.argv.slice(2))
  .catch((e) => {
    process.stderr.write(`marginalia: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  });
