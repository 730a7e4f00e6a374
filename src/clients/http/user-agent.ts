/** `converge/<version>`, read once from package.json (two folders up from both src/ and dist/). */
import { createRequire } from 'node:module';

let cached: string | undefined;

export function defaultUserAgent(): string {
  if (cached === undefined) {
    try {
      const pkg = createRequire(import.meta.url)('../../../package.json') as { version?: string };
      cached = pkg.version ? `converge/${pkg.version}` : 'converge';
    } catch {
      cached = 'converge';
    }
  }
  return cached;
}
