// What the bench needs to time the bin in a fresh process: where it is, a hook that makes the child
// write its own CPU (user + system) on exit (Node reports no CPU for a finished child), reading it
// back, and the median of a few runs.
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export const CPU_HOOK =
  'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\nbench-cpu-us "+(u.user+u.system)+" bench-rss-kb "+process.resourceUsage().maxRSS+"\\n")})';

/** The CPU in ms a child run with `--import CPU_HOOK` reported on its standard error, if it did. */
export function reportedCpuMs(stderr) {
  const cpu = /bench-cpu-us (\d+)/.exec(String(stderr));
  return cpu ? Number(cpu[1]) / 1000 : undefined;
}

/** The peak resident memory in MB a child run with `--import CPU_HOOK` reported, if it did. */
export function reportedPeakRssMb(stderr) {
  const rss = /bench-rss-kb (\d+)/.exec(String(stderr));
  return rss ? Number(rss[1]) / 1024 : undefined;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
