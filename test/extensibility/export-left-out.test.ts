/**
 * A whole export (no `--kind`, no `--namespace`) leaves out, aloud, a kind whose default place does
 * not exist (a secrets service without the directory auth method enabled), and exports the rest; an
 * export that asked for the kind by name fails instead, since the user meant that place. The
 * shipped kinds' places always exist in the sandbox (its `ldap` mount cannot be disabled), so the
 * throwaway notes service's kind is given an export that says its place is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/engine/catalog.js';
import { exportLive } from '../../src/engine/index.js';
import { SERVICE_MODULES } from '../../src/engine/services.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { SANDBOX_SERVICES } from '../../src/sandbox/services/index.js';
import { noteKind, notesModule, notesSandbox } from './notes-service.js';

const NOWHERE = 'the notes shelf is not set up on this service';
const noteWithoutPlace = {
  ...noteKind,
  exporter: {
    spec: (o: Parameters<typeof noteKind.describe>[0]) => noteKind.describe(o),
    missingScope: () => Promise.resolve(NOWHERE),
  },
};
const catalog = new Catalog([...SERVICE_MODULES, { ...notesModule, kinds: [noteWithoutPlace] }]);
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    services: [...SANDBOX_SERVICES, notesSandbox],
    config: { registry: { roles: [{ Name: 'kept-role' }] } },
  });
});
afterAll(async () => sandbox?.close());

describe('a kind whose default place does not exist', () => {
  it('is left out of a whole export, said aloud, and the rest is exported', async () => {
    const leftOut: string[] = [];
    const objects = await exportLive({ env: sandbox.env(), catalog, onLeftOut: (m) => leftOut.push(m) });
    expect(leftOut).toEqual([`Note: ${NOWHERE}`]);
    expect(objects.map((o) => `${o.key.kind}/${o.key.name}`)).toContain('AclRole/kept-role');
  });

  it('fails an export that asked for the kind by name, and one that has nobody to tell', async () => {
    await expect(
      exportLive({ env: sandbox.env(), catalog, kinds: ['Note'], onLeftOut: () => {} }),
    ).rejects.toThrow(`Note: ${NOWHERE}; nothing was exported`);
    await expect(exportLive({ env: sandbox.env(), catalog })).rejects.toThrow(`Note: ${NOWHERE}`);
  });
});
