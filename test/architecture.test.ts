/**
 * The layers of ARCHITECTURE.md, read from the code: every relative import in src/ is checked, so a
 * change that runs an arrow back up, closes a circle between folders, loads the sandbox or the CLI
 * with the library, or teaches the sandbox's shared core a service's name fails here with the file
 * and the import. The second half shows each rule failing on a small synthetic graph.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  folderCycles,
  type Import,
  importsOf,
  layerViolations,
  namesInCode,
  readSources,
  staticallyLoaded,
  staticSandboxImports,
} from './support/import-graph.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const SERVICE_NAMES = ['registry', 'workspaces', 'secrets', 'scheduler'];
/** The sandbox's shared parts: each service contributes through its module in sandbox/services/. */
const SERVICE_BLIND = /^sandbox\/(core\/|config\/|index\.ts$|command\.ts$)/;

describe('the import graph of src/', () => {
  const sources = readSources(SRC);
  const imports = importsOf(sources);

  it('reads the imports of every file', () => {
    // A reader that found nothing would pass every rule below.
    expect(sources.length).toBeGreaterThan(100);
    expect(imports).toContainEqual(
      expect.objectContaining({ from: 'engine/workflow.ts', to: 'applier/applier.ts', kind: 'static' }),
    );
    expect(imports).toContainEqual(
      expect.objectContaining({ from: 'index.ts', to: 'sandbox/index.ts', kind: 'dynamic' }),
    );
  });

  it('(a) imports only downwards: cli → reconcile → engine → manifest, planner, applier → resources → clients → common', () => {
    expect(layerViolations(imports)).toEqual([]);
  });

  it('(b) has no cycle between folders', () => {
    expect(folderCycles(imports)).toEqual([]);
  });

  it('(c) loads the sandbox only with import()', () => {
    expect(staticSandboxImports(imports)).toEqual([]);
  });

  it('(d) the library entry (src/index.ts) does not load the CLI', () => {
    expect(staticallyLoaded(imports, 'index.ts', 'cli')).toEqual([]);
  });

  it('(f) `converge validate` loads neither the planner nor the applier (start-up time)', () => {
    for (const folder of ['planner', 'applier'])
      expect(staticallyLoaded(imports, 'cli/commands/validate.ts', folder)).toEqual([]);
  });

  it('(f) `converge validate` loads no service client nor the HTTP client: definitions import them on use', () => {
    for (const file of [
      'clients/http/client.ts',
      'clients/registry/client.ts',
      'clients/workspaces/client.ts',
      'clients/secrets/client.ts',
      'clients/scheduler/client.ts',
      'engine/connections.ts',
    ])
      expect(staticallyLoaded(imports, 'cli/commands/validate.ts', file)).toEqual([]);
  });

  it("(e) the sandbox's core, index, config and command name no service outside comments", () => {
    const shared = sources.filter((file) => SERVICE_BLIND.test(file.path));
    expect(shared.map((file) => file.path)).toEqual(
      expect.arrayContaining(['sandbox/index.ts', 'sandbox/command.ts']),
    );
    expect(shared.flatMap((file) => namesInCode(file, SERVICE_NAMES))).toEqual([]);
  });
});

describe('each rule fails on a graph that breaks it', () => {
  const edge = (from: string, to: string, kind: Import['kind'] = 'static'): Import => {
    const relative = path.posix.relative(path.posix.dirname(from), to).replace(/\.ts$/, '.js');
    return { from, to, specifier: relative.startsWith('.') ? relative : `./${relative}`, kind };
  };

  it('(a) an import from a lower layer to a higher one, by file and import', () => {
    const problems = layerViolations([
      edge('resources/local-file.ts', 'manifest/types.ts', 'type'),
      edge('engine/workflow.ts', 'planner/planner.ts'),
      edge('planner/planner.ts', 'manifest/types.ts'),
    ]);
    expect(problems).toEqual([
      "resources/local-file.ts imports '../manifest/types.js': resources/ is below manifest/, so the import goes up a layer",
    ]);
  });

  it('(a) the sandbox imports only clients and common, and only the front ends import it', () => {
    expect(
      layerViolations([
        edge('sandbox/services/secrets/model.ts', 'clients/secrets/ldap-config.ts'),
        edge('sandbox/core/server.ts', 'engine/catalog.ts'),
        edge('engine/connections.ts', 'sandbox/index.ts', 'dynamic'),
        edge('cli/commands/sandbox.ts', 'sandbox/command.ts', 'dynamic'),
      ]),
    ).toEqual([
      "sandbox/core/server.ts imports '../../engine/catalog.js': sandbox/ may import only clients, common",
      "engine/connections.ts imports '../sandbox/index.js': only ., cli may import sandbox/",
    ]);
  });

  it('(a) a new top folder must be given a layer', () => {
    expect(layerViolations([edge('plugins/x.ts', 'common/types.ts')])).toEqual([
      "plugins/x.ts imports '../common/types.js': plugins/ has no layer (add it to LAYERING)",
    ]);
  });

  it('(b) a cycle between sibling folders inside one top folder; a folder and its own subfolder may import each other', () => {
    expect(
      folderCycles([
        edge('sandbox/core/create-services.ts', 'sandbox/config/types.ts', 'type'),
        edge('sandbox/config/load.ts', 'sandbox/core/service.ts'),
        edge('planner/masking.ts', 'planner/render/format.ts'),
        edge('planner/render/format.ts', 'planner/types.ts'),
      ]),
    ).toEqual([
      "cycle between sandbox/config, sandbox/core: sandbox/config → sandbox/core (sandbox/config/load.ts imports '../core/service.js'); " +
        "sandbox/core → sandbox/config (sandbox/core/create-services.ts imports '../config/types.js')",
    ]);
  });

  it('(b) a cycle between folders, with an import for each arrow; files of one folder may import each other', () => {
    const problems = folderCycles([
      edge('planner/planner.ts', 'applier/applier.ts'),
      edge('applier/applier.ts', 'planner/types.ts'),
      edge('clients/http/client.ts', 'clients/service.ts'),
      edge('clients/service.ts', 'clients/http/client.ts'),
    ]);
    expect(problems).toEqual([
      "cycle between applier, planner: applier → planner (applier/applier.ts imports '../planner/types.js'); " +
        "planner → applier (planner/planner.ts imports '../applier/applier.js')",
    ]);
  });

  it('(c) a static import of the sandbox from outside it; import() and import type pass', () => {
    expect(
      staticSandboxImports([
        edge('cli/commands/sandbox.ts', 'sandbox/command.ts'),
        edge('index.ts', 'sandbox/index.ts', 'dynamic'),
        edge('index.ts', 'sandbox/index.ts', 'type'),
        edge('sandbox/index.ts', 'sandbox/core/server.ts'),
      ]),
    ).toEqual([
      "cli/commands/sandbox.ts imports '../../sandbox/command.js' statically: load it with import()",
    ]);
  });

  it('(d) src/index.ts loading the CLI, directly or through another file', () => {
    expect(staticallyLoaded([edge('index.ts', 'cli/program.ts')], 'index.ts', 'cli')).toEqual([
      "index.ts loads cli/ statically: index.ts imports './cli/program.js'",
    ]);
    expect(
      staticallyLoaded(
        [
          edge('index.ts', 'command-line.ts'),
          edge('command-line.ts', 'cli/program.ts'),
          edge('command-line.ts', 'cli/io.ts', 'type'),
        ],
        'index.ts',
        'cli',
      ),
    ).toEqual([
      "index.ts loads cli/ statically: index.ts imports './command-line.js', which command-line.ts imports './cli/program.js'",
    ]);
    expect(staticallyLoaded([edge('index.ts', 'cli/program.ts', 'dynamic')], 'index.ts', 'cli')).toEqual([]);
  });

  it("(e) a service's name in code, not in comments", () => {
    const file = {
      path: 'sandbox/config/load.ts',
      text: [
        '/** Each service (the registry, say) brings its own section. */',
        '// secrets and scheduler are services too',
        'const sections = services.map((s) => s.configSection);',
        "const fallback = { name: 'Registry' };",
        'const workspacesPort = 0;',
        'const note = `the ${"scheduler"} answers`;',
      ].join('\n'),
    };
    expect(namesInCode(file, SERVICE_NAMES)).toEqual([
      "sandbox/config/load.ts:4 names 'Registry' in \"'Registry'\"",
      'sandbox/config/load.ts:5 names \'workspaces\' in "workspacesPort"',
      'sandbox/config/load.ts:6 names \'scheduler\' in "\\"scheduler\\""',
    ]);
  });
});
