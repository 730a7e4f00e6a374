/**
 * Commands load their modules only when they run, and each service's operator commands are found
 * from the engine's one list of services: `--help` must still show every command and each service
 * command's own help must work, in-process as the binary runs them.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { serviceCommands } from '../../src/cli/service-module.js';
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
});
