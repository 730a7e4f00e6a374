/**
 * The package's bin (dist/cli/main.js) runs the bundle scripts/bundle-cli.mjs writes into
 * dist/cli-bundle/ (issue 20, start-up), while the library and the in-process tests run tsc's modules.
 * What must hold once `npm run build` ran: the bin says what the in-process CLI says (validate,
 * plan and an operator command against the sandbox, help), so commands found by a computed path
 * (`./commands/<service>.js`) and files found beside a module (the generated validators) are still
 * found; and `converge validate` loads the bundle only: none of dist's unbundled modules, not ajv's
 * compiler, not node:crypto nor node:child_process, not yaml.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { CLI, convergeProcess } from './helpers.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), prefix));

function env(): Record<string, string> {
  return { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tmp('converge-bin-state-') };
}

function manifest(text: string): string {
  const dir = tmp('converge-bin-');
  writeFileSync(path.join(dir, 'roles.yaml'), text);
  return dir;
}

const ROLE =
  'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: bin-web }\nspec: { Description: web }\n';
// A schema error on line 4 (Description must be a string): found by the generated validator.
const BAD_ROLE =
  'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: bin-bad }\nspec:\n  Description: [not, text]\n';

/** The bin in a child process and the CLI in this process, with the same arguments and environment. */
async function both(args: string[], e: Record<string, string>) {
  const [bin, inProcess] = [await convergeProcess(args, e), await runCli(args, e)];
  return { bin, inProcess };
}

describe('the bundled bin', () => {
  it('validates as the in-process CLI does: a valid manifest, and a schema error with file and line', async () => {
    const e = env();
    const good = await both(['validate', '-f', manifest(ROLE)], e);
    expect(good.bin).toEqual(good.inProcess);
    expect(good.bin.code).toBe(0);

    const dir = manifest(BAD_ROLE);
    const bad = await both(['validate', '-f', dir], e);
    expect(bad.bin).toEqual(bad.inProcess);
    expect(bad.bin.code).not.toBe(0);
    expect(bad.bin.stderr + bad.bin.stdout).toContain(`${path.join(dir, 'roles.yaml')}:5`);
  });

  it('plans against the sandbox as the in-process CLI does', async () => {
    const e = env();
    const args = ['plan', '-f', manifest(ROLE)];
    const plan = await both(args, e);
    expect(plan.bin).toEqual(plan.inProcess);
    expect(plan.bin.stdout).toContain('AclRole/default/bin-web');
    const json = await both([...args, '--json'], e);
    expect(JSON.parse(json.bin.stdout)).toEqual(JSON.parse(json.inProcess.stdout));
  });

  it("lists every service's operator commands in --help, and runs one (`role list`)", async () => {
    const e = env();
    const help = await both(['--help'], e);
    expect(help.bin).toEqual(help.inProcess);
    for (const command of ['role', 'workspace', 'ldap', 'job'])
      expect(help.bin.stdout).toContain(`  ${command} `);

    const list = await both(['role', 'list'], e);
    expect(list.bin).toEqual(list.inProcess);
    expect(list.bin.code).toBe(0);
  });

  it("names the sources' files and lines in CONVERGE_DEBUG's frames", async () => {
    // A token the registry refuses: an error from the HTTP layer, with a stack.
    const e = { ...env(), CONVERGE_REGISTRY_TOKEN: 'not-a-token', CONVERGE_DEBUG: '1' };
    const r = await convergeProcess(['plan', '-f', manifest(ROLE)], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^\s+at .*[\\/]src[\\/]clients[\\/]http[\\/]\S+\.ts:\d+:\d+\)?$/m);
    expect(r.stderr).not.toContain('cli-bundle');
  });

  it('loads only the bundle for validate: no unbundled module, no ajv, no node:crypto or child_process', async () => {
    const log = path.join(tmp('converge-bin-loads-'), 'resolved.txt');
    // Every module the ES module loader resolves, appended to `log` from the loader's hooks thread.
    const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');
  return resolved;
}`;
    // On exit: Node's own list of the built-in modules it loaded, and CommonJS's cache (ajv is required).
    const probe = `import { createRequire, register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));
  const required = Object.keys(createRequire(process.execPath).cache);
  process.stderr.write('\\nLOADED ' + JSON.stringify({ builtins, required }) + '\\n');
});`;
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        `data:text/javascript,${encodeURIComponent(probe)}`,
        CLI,
        'validate',
        '-f',
        manifest(ROLE),
      ],
      { env: { PATH: process.env.PATH, ...env() }, encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const loaded = JSON.parse(/LOADED (.*)/.exec(r.stderr)![1]!) as {
      builtins: string[];
      required: string[];
    };
    const dist = path.dirname(path.dirname(CLI));
    const own = readFileSync(log, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith('file:'))
      .map((url) => path.relative(dist, new URL(url).pathname));
    // The bin itself and the bundle's files; nothing from dist's layer folders, no package.
    expect(
      own.filter((f) => f !== path.join('cli', 'main.js') && !f.startsWith(`cli-bundle${path.sep}`)),
    ).toEqual([]);
    expect(own.length).toBeGreaterThan(1);
    expect(
      loaded.required.filter((f) =>
        /[\\/]node_modules[\\/]ajv(-formats)?[\\/]dist[\\/](ajv|core)\.js$/.test(f),
      ),
    ).toEqual([]);
    expect(loaded.builtins).not.toContain('crypto');
    expect(loaded.builtins).not.toContain('child_process');
    // Nor yaml (the position-keeping parser): a valid plain manifest is read by the fast parse alone.
    // yaml's chunk is found by the name its parse errors carry.
    const chunks = readdirSync(path.join(dist, 'cli-bundle')).filter((f) => f.endsWith('.js'));
    const yamlChunks = chunks.filter((f) =>
      readFileSync(path.join(dist, 'cli-bundle', f), 'utf8').includes('"YAMLParseError"'),
    );
    expect(yamlChunks.length).toBeGreaterThan(0);
    expect(own.filter((f) => yamlChunks.includes(path.basename(f)))).toEqual([]);
  });
});
