/**
 * `exportLive` names one variable per secret, and two objects whose names differ only in what a
 * variable name cannot hold (`web-1`, `web_1`) still get two variables: filling one must not fill the
 * other's secret, whatever order the service lists them in. No shipped kind exports secrets of more
 * than one object at once (a directory configuration is exported one mount at a time), so the
 * throwaway notes service's kind is made exportable here, against its sandbox over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/engine/catalog.js';
import { connect, exportedDocument, exportLive } from '../../src/engine/index.js';
import { SERVICE_MODULES } from '../../src/engine/services.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { SANDBOX_SERVICES } from '../../src/sandbox/services/index.js';
import { noteKind, notesModule, notesSandbox, notesService } from './notes-service.js';

const exportableNote = {
  ...noteKind,
  exporter: { spec: (o: Parameters<typeof noteKind.describe>[0]) => noteKind.describe(o) },
};
const catalog = new Catalog([...SERVICE_MODULES, { ...notesModule, kinds: [exportableNote] }]);
let sandbox: RunningSandbox;

/**
 * Written in this order, so the service lists `web-1` first while the export's address order puts
 * `web_1` first: the names follow the export's order, not the service's.
 */
const NOTES = ['web-1', 'web_1', 'web-1-auth'];

beforeAll(async () => {
  sandbox = await startSandbox({ services: [...SANDBOX_SERVICES, notesSandbox] });
  const connections = connect(undefined, { env: sandbox.env(), catalog });
  try {
    for (const name of NOTES) {
      await connections
        .client(notesService)
        .write(name, { Text: name, Auth: { User: 'u', ApiKey: `key-of-${name}` }, Owner: 'converge' });
    }
  } finally {
    await connections.close();
  }
});
afterAll(async () => sandbox?.close());

async function variables(): Promise<Record<string, string[]>> {
  const objects = await exportLive({ env: sandbox.env(), catalog, kinds: ['Note'] });
  return Object.fromEntries(objects.map((o) => [o.key.name, o.placeholders.map((p) => p.variable)]));
}

describe('export of objects whose variable names would collide', () => {
  it('gives each secret its own variable: the first in the export’s address order keeps the readable name', async () => {
    expect(await variables()).toEqual({
      'web-1': ['NOTE_WEB_1_AUTH_APIKEY_2'],
      // `web-1-auth` + `Auth.ApiKey` spells NOTE_WEB_1_AUTH_AUTH_APIKEY: no collision, no suffix.
      'web-1-auth': ['NOTE_WEB_1_AUTH_AUTH_APIKEY'],
      web_1: ['NOTE_WEB_1_AUTH_APIKEY'],
    });
  });

  it('writes each document with its own variable, the same on every export', async () => {
    const objects = await exportLive({ env: sandbox.env(), catalog, kinds: ['Note'] });
    const byName = new Map(objects.map((o) => [o.key.name, exportedDocument(o)]));
    expect(byName.get('web_1')).toContain('ApiKey: ${env:NOTE_WEB_1_AUTH_APIKEY}\n');
    expect(byName.get('web-1')).toContain('ApiKey: ${env:NOTE_WEB_1_AUTH_APIKEY_2}\n');
    expect(byName.get('web-1')).toContain('set NOTE_WEB_1_AUTH_APIKEY_2 and allow it');
    expect(await variables()).toEqual(await variables());
  });

  it('gives no two secrets the same variable', async () => {
    const all = Object.values(await variables()).flat();
    expect(new Set(all).size).toBe(all.length);
  });
});

describe('a placeholder’s note', () => {
  it('stays one comment line whatever names the service gave (a group’s, an entry’s)', () => {
    const text = exportedDocument({
      key: { kind: 'Job', name: 'j', namespace: 'default' },
      namespaceField: 'namespace',
      spec: { Meta: { x: '${env:V}' } },
      placeholders: [{ path: 'TaskGroups[g\nkind: Evil].Env.DB_PASSWORD', variable: 'V' }],
    });
    expect(text).not.toMatch(/^kind: Evil/m);
    expect(text).toContain('# TaskGroups[g\\nkind: Evil].Env.DB_PASSWORD is secret');
  });
});
