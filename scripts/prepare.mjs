#!/usr/bin/env node
// `npm run prepare` (after `npm ci`, and when `npx converge` first installs the checkout): builds,
// unless the build is newer than every file it is made from. The first `npx converge` in a checkout
// ran the whole build silently (npm hides a prepare's output) for about 25 s, though `npm ci` had
// just built it; a stale or missing build is always rebuilt.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const stamp = path.join(root, 'dist', '.build-stamp');

/** The newest modification time under `entry` (a file or a folder), 0 when it is not there. */
function newest(entry) {
  let info;
  try {
    info = statSync(entry);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = info.mtimeMs;
  for (const name of readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, name)));
  return latest;
}

const sources = [
  'src',
  'scripts',
  'schemas',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
const built = newest(stamp);
const changed = Math.max(...sources.map((s) => newest(path.join(root, s))));
if (built > 0 && built > changed) {
  process.stderr.write('converge: the build is up to date\n');
  process.exit(0);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
