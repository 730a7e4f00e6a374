#!/usr/bin/env node
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
  const { run } = await import('./program.js');
  code = await run(args, processIo());
}
// Let pending output drain instead of exiting mid-write on a pipe.
process.exitCode = code;
