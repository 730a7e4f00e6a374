/**
 * Commands load their modules only when they run, and each service's operator commands are found
 * from the engine's one list of services: `--help` must still show every command and each service
 * command's own help must work, in-process as the binary runs them.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/program.js';
import { type CliServiceModule, serviceCommands } from '../../src/cli/service-module.js';
import { Catalog } from '../../src/engine/catalog.js';
import { SERVICE_MODULES } from '../../src/engine/services.js';
import { runCli } from '../support/run-cli.js';

const env = { PATH: process.env.PATH };

describe('the program built from the engine list of services', () => {
  it('lists the core commands and every service operator command in --help', async () => {
    const r = await runCli(['--help'], env);
    expect(r.code).toBe(0);
    const listed = [...r.stdout.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]);
    for (const name of [
      'validate',
      'plan',
      'apply',
      'sandbox',
      'role',
      'workspace',
      'state',
      'ldap',
      'rekey',
      'job',
    ]) {
      expect(listed).toContain(name);
    }
  });

  it.each([
    ['role', 'get'],
    ['workspace', 'lock'],
    ['state', 'push'],
    ['ldap', 'login'],
    ['rekey', 'start'],
    ['job', 'scale'],
  ])('answers `converge %s %s --help`', async (group, command) => {
    const r = await runCli([group, command, '--help'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: converge ${group} ${command}`);
  });

  it('finds commands for every shipped service by its name', async () => {
    for (const module of SERVICE_MODULES) {
      const commands = await serviceCommands(module);
      expect(commands, module.definition.name).toBeTypeOf('function');
      const program = new Command('converge');
      commands!(program, { io: {} as never, catalog: {} as never, action: () => async () => {} });
      expect(program.commands.length, module.definition.name).toBeGreaterThan(0);
    }
  });

  it('gives a service with no commands file no commands instead of failing', async () => {
    const quiet = { ...SERVICE_MODULES[0].definition, name: 'no-such-service' };
    await expect(serviceCommands({ definition: quiet, kinds: [] })).resolves.toBeUndefined();
  });

  it('checks a job count while parsing, before the handler module loads', async () => {
    const r = await runCli(['job', 'revert', 'web', '1', '--enforce-prior-version', 'two'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--enforce-prior-version must be a whole number');
  });

  it('declares no service command for a core command, and every one for help or a word to suggest for', async () => {
    const asked: string[] = [];
    // Each shipped service with a `commands` of its own, recording that the program asked for it.
    const catalog = new Catalog<CliServiceModule>(
      SERVICE_MODULES.map((module) => ({
        ...module,
        commands: (program: Command) => {
          asked.push(module.definition.name);
          program.command(`${module.definition.name}-ops`).description('operator commands');
        },
      })),
    );
    const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-lazy-'));
    writeFileSync(
      path.join(dir, 'role.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: web }\nspec: { Description: web }\n',
    );
    const output: string[] = [];
    const sink = new Writable({ write: (chunk, _e, done) => (output.push(String(chunk)), done()) });
    const io = { stdout: sink, stderr: sink, stdinIsTTY: false, env: { ...env } };

    expect(await run(['validate', '-f', dir], io, catalog)).toBe(0);
    expect(asked).toEqual([]);

    expect(await run(['--help'], io, catalog)).toBe(0);
    expect(asked).toEqual(SERVICE_MODULES.map((m) => m.definition.name));
    expect(output.join('')).toContain(`${SERVICE_MODULES[0].definition.name}-ops`);

    // A misspelt service command is suggested from the services' commands, so they are declared.
    asked.length = 0;
    output.length = 0;
    const name = `${SERVICE_MODULES[0].definition.name}-op`;
    expect(await run([name], io, catalog)).toBe(1);
    expect(output.join('')).toContain(`${name}s`);
    expect(asked.length).toBe(SERVICE_MODULES.length);
  });
});
