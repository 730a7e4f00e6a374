#!/usr/bin/env node
import v8 from 'node:v8';
import { quietOnBrokenPipe } from './broken-pipe.js';
import { processIo } from './io.js';

quietOnBrokenPipe(process.stdout);
quietOnBrokenPipe(process.stderr);

const args = process.argv.slice(2);
let code: number;
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  // Scripts call `converge --version` to check the install: answer before loading the program.
  const { VERSION } = await import('./version.js');
  process.stdout.write(`${VERSION}\n`);
  code = 0;
} else {
  // WebAssembly compiled by Liftoff alone, never optimised by TurboFan (the HTTP client's parser,
  // llhttp, is WebAssembly): a command lives seconds, and the optimising compiles it set off in the
  // background held the process at its end. `converge plan` of one object took 0.50 s instead of
  // 0.66 s (median of 15 runs each, 2 cores), and a plan of 2,201 objects was no slower. Set before any
  // module is compiled, which happens on the first request.
  v8.setFlagsFromString('--liftoff-only');
  const { run } = await import('./program.js');
  code = await run(args, processIo());
}
// Let pending output drain instead of exiting mid-write on a pipe.
process.exitCode = code;
