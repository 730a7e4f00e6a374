#!/usr/bin/env node
import { processIo } from './io.js';
import { run } from './program.js';

const code = await run(process.argv.slice(2), processIo());
// Let pending output drain instead of exiting mid-write on a pipe.
process.exitCode = code;
