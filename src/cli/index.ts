/** Bundle entry of the CLI (`dist/cli.js`), loaded by `bin/marginalia.js`. */
export { main, VERSION } from './main';
