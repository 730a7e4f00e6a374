// Run in a child process so its peak memory is its own: `plan <dir>` (a warm plan through the engine,
// services from the environment) or `yaml <file>` (the same file parsed with the yaml package
// alone). Prints one JSON line: CPU (user + system) and peak RSS of the whole process.
import { readFileSync } from 'node:fs';

const [mode, target] = process.argv.slice(2);
let detail = {};
if (mode === 'yaml') {
  const { parseAllDocuments } = await import('yaml');
  const docs = parseAllDocuments(readFileSync(target, 'utf8'));
  detail = { documents: docs.map((d) => d.toJS()).length };
} else if (mode === 'plan') {
  const { loadManifest, plan } = await import('../../dist/engine/index.js');
  const manifest = await loadManifest([target], { env: process.env });
  const run = await plan(manifest, { env: process.env });
  await run.connections.close();
  detail = { summary: run.plan.summary, problems: run.plan.problems.length };
} else {
  throw new Error(`unknown mode ${mode}`);
}
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    ...detail,
  }),
);
