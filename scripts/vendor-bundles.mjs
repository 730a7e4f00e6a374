// After tsc: bundles each dependency listed below (ESM packages made of hundreds of small modules)
// into one file under dist/vendor/, and points dist's imports of it there. Node pays per module it
// resolves and links: TypeBox's ~200 files cost about 70 ms at every start (every kind builds its
// schemas with it when loaded), its bundle about 10 ms; yaml's 72 CommonJS files about 15 ms more
// than its bundle (issue 20, `converge validate` start-up); picomatch's CommonJS files (the allow-lists
// every command reads) about 8 ms, for Node's CommonJS loader and export lexer.
// The bundle is made from the installed package at each build, so it cannot drift from it; the
// sources and the tests keep importing the package itself. Without esbuild (a devDependency, here
// through tsx) the imports stay as tsc wrote them: the build only runs slower.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
/** Package name → its bundle's file name under dist/vendor/. Only packages imported by their root. */
const VENDORED = {
  '@sinclair/typebox': 'typebox.js',
  yaml: 'yaml.js',
  commander: 'commander.js',
  picomatch: 'picomatch.js',
  // Two small modules, but every command's kinds import it: one package resolution less at start.
  'p-limit': 'p-limit.js',
  // One file already, but every manifest read parses with it: one package resolution less at start.
  'js-yaml': 'js-yaml.js',
};

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.warn('esbuild is not installed: dependencies are not bundled (start-up is slower)');
  process.exit(0);
}

/**
 * Source edits made while bundling, each where a package loads at start what it uses only on a
 * path Converge never or rarely takes. A pattern that is no longer found fails the build, so a new
 * version of the package is looked at again rather than silently bundled as it is.
 */
const DEFERRED = [
  {
    // commander loads node:child_process (and with it net, streams…, about 3 ms of every start) for
    // subcommands that are separate executables, which Converge has none of: load it on first spawn.
    file: /[\\/]commander[\\/]lib[\\/]command\.js$/,
    from: "const childProcess = require('node:child_process');",
    to: "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };",
  },
];

const deferLoads = {
  name: 'defer-loads',
  setup(build) {
    for (const edit of DEFERRED) {
      build.onLoad({ filter: edit.file }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes(edit.from)) {
          throw new Error(`${args.path} no longer has \`${edit.from}\`: look at scripts/vendor-bundles.mjs`);
        }
        edit.applied = true;
        return { contents: source.replace(edit.from, edit.to), loader: 'js' };
      });
    }
  },
};

for (const [name, file] of Object.entries(VENDORED)) {
  // The names Node itself offers an importer of the package (for CommonJS, what its lexer finds),
  // re-exported by name: a bundle of a CommonJS package would otherwise offer a default export only.
  // A CommonJS package's `default` (its module.exports, picomatch's function) is kept as Node gives it.
  const loaded = await import(name);
  const offered = Object.keys(loaded);
  const names = offered.filter((n) => n !== 'default');
  // A CommonJS package's names are properties of its `default`; an ES module package's default
  // export (p-limit's function) is an export of its own and is kept beside its names.
  const ownDefault = names.some((n) => loaded.default?.[n] !== loaded[n]);
  if (offered.includes('default') && loaded.default !== undefined && (names.length === 0 || ownDefault))
    names.push('default');
  await esbuild.build({
    stdin: {
      contents: `export { ${names.join(', ')} } from '${name}';`,
      resolveDir: fileURLToPath(new URL('..', import.meta.url)),
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // CommonJS code inside an ES module bundle still calls require() for Node's built-ins.
    banner: {
      js: "import { createRequire as __vendorRequire } from 'node:module';\nconst require = __vendorRequire(import.meta.url);",
    },
    outfile: path.join(dist, 'vendor', file),
    legalComments: 'inline',
    logLevel: 'warning',
    plugins: [deferLoads],
  });
}
for (const edit of DEFERRED) {
  if (!edit.applied)
    throw new Error(`no bundled file matched ${edit.file}: look at scripts/vendor-bundles.mjs`);
}

/** Every compiled module in dist except the bundles themselves (and the CLI's, made after this). */
function* modules(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (full !== path.join(dist, 'vendor') && full !== path.join(dist, 'cli-bundle')) yield* modules(full);
    } else if (entry.name.endsWith('.js')) yield full;
  }
}

let rewritten = 0;
for (const file of modules(dist)) {
  const source = readFileSync(file, 'utf8');
  let changed = source;
  for (const [name, bundle] of Object.entries(VENDORED)) {
    let target = path
      .relative(path.dirname(file), path.join(dist, 'vendor', bundle))
      .split(path.sep)
      .join('/');
    if (!target.startsWith('.')) target = `./${target}`;
    // Only the package's root as a whole specifier (`from '@sinclair/typebox'`), static or import().
    const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const specifier = new RegExp(`((?:\\bfrom|\\bimport)\\s*\\(?\\s*)(['"])${escaped}\\2`, 'g');
    changed = changed.replace(specifier, (_, before, quote) => `${before}${quote}${target}${quote}`);
  }
  if (changed !== source) {
    writeFileSync(file, changed);
    rewritten += 1;
  }
}
console.log(
  `bundled ${Object.keys(VENDORED).join(', ')} into dist/vendor/: ${rewritten} modules point there`,
);
