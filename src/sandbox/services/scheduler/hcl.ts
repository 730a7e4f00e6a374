/**
 * The scheduler's only HCL parser: a thin adapter over `@cdktf/hcl2json` (a WebAssembly build of
 * HashiCorp's HCL 2 parser that ships inside the npm package).
 *
 * DEPRECATED UPSTREAM: `@cdktf/hcl2json` belongs to the sunset CDK for Terraform. It is pinned to an
 * exact version and nothing else may import it, so replacing it means rewriting this one file.
 *
 * It answers HCL's block structure as JSON (`{"job":{"web":[{...,"group":{"g":[{...}]}}]}}`): a block
 * is a list of bodies, keyed by its labels; attributes are values. Expressions are not evaluated:
 * `"${1 + 2}"` and `var.x` come back as `"${...}"` strings. It reports no source positions for what it
 * parsed, only for syntax errors.
 */

/**
 * Loaded at the first parse, not with the sandbox: importing the library starts Go's WebAssembly
 * runtime at once (about 200 ms of CPU), which a sandbox that never parses HCL (the bench, most tests)
 * paid while its first requests waited.
 */
let library: Promise<typeof import('@cdktf/hcl2json')> | undefined;

/** A syntax error, with HCL's diagnostic text (`input.hcl:2,7-3,1: Summary; Detail`). */
export class HclSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HclSyntaxError';
  }
}

export async function parseHcl(filename: string, source: string): Promise<Record<string, unknown>> {
  library ??= import('@cdktf/hcl2json').catch((err: unknown) => {
    library = undefined; // tried again at the next parse, not refused for ever
    throw err;
  });
  const { parse } = await library;
  try {
    return (await parse(filename, source)) as Record<string, unknown>;
  } catch (err) {
    throw new HclSyntaxError(diagnosticsText(filename, (err as Error).message));
  }
}

/**
 * The library's `parse config: [d1 d2]` as HCL's own `Diagnostics.Error()` prints it (which the real
 * product shows): the first diagnostic, then `, and N other diagnostic(s)`.
 */
function diagnosticsText(filename: string, raw: string): string {
  const inner = raw.replace(/^parse config: \[/, '').replace(/\]$/, '');
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const parts = inner.split(new RegExp(` (?=${escaped}:\\d+,\\d+)`));
  if (parts.length <= 1) return inner;
  return `${parts[0]}, and ${parts.length - 1} other diagnostic(s)`;
}
