// After tsc and scripts/vendor-bundles.mjs: bundles the command line (dist/cli/main.js and every
// module it imports, vendored dependencies included) into dist/cli-bundle/, and makes dist/cli/main.js,
// the package's bin, a small module that imports the bundle's entry. Node pays per module it
// resolves, reads, compiles and links: `converge validate` loaded about 130 modules, about half its
// start-up (issue 20); bundled, it loads about 30 files.
// - Code splitting: each `import()` (a command's handler, the sandbox, a service's commands) stays a
//   chunk of its own, loaded when it runs, so bundling adds nothing to what a command loads.
// - Packages under node_modules stay imports (undici, ajv, openpgp…): they load on use, as before.
// - `import.meta.url` is rewritten, module by module, to the URL of the compiled file it came from,
//   so what the code finds beside itself (the generated validators, package.json) is found as before.
// - The input is what tsc wrote, so the bundle follows the sources without any list of files; the
//   library entry (dist/index.js) is not bundled and stays as tsc wrote it.
// - tsc's source maps are chained into dist/cli-bundle/*.js.map: with CONVERGE_DEBUG (or
//   `node --enable-source-maps`) stacks name src/*.ts; otherwise nothing reads them.
// Without esbuild (a devDependency) the bin stays tsc's unbundled entry: the CLI only starts slower.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const bin = path.join(dist, 'cli', 'main.js');
const BUNDLE_FOLDER = 'cli-bundle';
const out = path.join(dist, BUNDLE_FOLDER);
/** Marks the bin once it points at the bundle: bundling that again would bundle nothing. */
const STUB_MARK = '// converge: bundled command line';

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.warn('esbuild is not installed: the command line is not bundled (start-up is slower)');
  process.exit(0);
}

const entry = readFileSync(bin, 'utf8');
if (entry.includes(STUB_MARK)) {
  console.error(`${bin} already points at the bundle: run tsc first (npm run build)`);
  process.exit(1);
}

/** Gives each compiled module the `import.meta.url` of its own file, wherever its chunk lands. */
const ownFileUrl = {
  name: 'own-file-url',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, (args) => {
      const contents = readFileSync(args.path, 'utf8');
      if (!contents.includes('import.meta.url')) return undefined;
      // Every output file is directly in `out`, so one relative path serves whichever chunk it is.
      const relative = path.relative(out, args.path).split(path.sep).join('/');
      return {
        contents: contents.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(relative)}, import.meta.url).href`,
        ),
        loader: 'js',
      };
    });
  },
};

rmSync(out, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: { main: bin },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: out,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  packages: 'external',
  // Classes keep their names when two modules' names collide (errors name themselves after their class).
  keepNames: true,
  // Less text for V8 to scan and compile at every start (about 2.5% of validate's instructions);
  // names are kept, and the source maps lead back to src/ (CONVERGE_DEBUG turns them on, below).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  // Positions only: the sources are not in the package, and stack frames need no more.
  sourcesContent: false,
  legalComments: 'inline',
  metafile: true,
  logLevel: 'warning',
  plugins: [ownFileUrl],
});

// The bin: Node 22.1 and later keep V8's compiled code of the bundle between runs (as tsc's bin
// does; a no-op on Node 20); CONVERGE_DEBUG's stack frames name src/ files and lines (source maps
// cost time, so only then); then the bundle's entry, imported after both (a static import would
// be loaded before this module's own code runs).
writeFileSync(
  bin,
  [
    '#!/usr/bin/env node',
    `${STUB_MARK} (scripts/bundle-cli.mjs); the unbundled modules beside it serve the library.`,
    "import nodeModule from 'node:module';",
    '',
    'nodeModule.enableCompileCache?.();',
    'if (process.env.CONVERGE_DEBUG) process.setSourceMapsEnabled(true);',
    `await import('../${BUNDLE_FOLDER}/main.js');`,
    '',
  ].join('\n'),
);
rmSync(`${bin}.map`, { force: true });

const outputs = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'));
const inputs = Object.keys(result.metafile.inputs).length;
console.log(
  `bundled the command line: ${inputs} modules into ${outputs.length} files in dist/${BUNDLE_FOLDER}/`,
);
