/** The sandbox stores' records by ID and by name, kept in step through renames and deletes. */
import { describe, expect, it } from 'vitest';
import { KeyedRecords } from '../../src/sandbox/services/shared/keyed-records.js';

interface Rec {
  id: string;
  org: string;
  name: string;
}
const records = () =>
  new KeyedRecords<Rec>(
    (r) => r.id,
    (r) => [r.org, r.name],
  );

describe('KeyedRecords', () => {
  it('finds a record by its scope and name, and by nothing else', () => {
    const table = records();
    table.set({ id: '1', org: 'a', name: 'web' });
    expect(table.byName('a', 'web')?.id).toBe('1');
    expect(table.byName('b', 'web')).toBeUndefined();
    // No scope and name pair stands for another, whatever characters they hold.
    table.set({ id: '2', org: 'a\u0000b', name: 'c' });
    table.set({ id: '3', org: 'a', name: 'b\u0000c' });
    expect(table.byName('a\u0000b', 'c')?.id).toBe('2');
    expect(table.byName('a', 'b\u0000c')?.id).toBe('3');
  });

  it('follows a rename: the old name is free, the new one found', () => {
    const table = records();
    table.set({ id: '1', org: 'a', name: 'web' });
    table.set({ id: '1', org: 'a', name: 'api' });
    expect(table.byName('a', 'web')).toBeUndefined();
    expect(table.byName('a', 'api')?.id).toBe('1');
    expect(table.size).toBe(1);
  });

  it('a name taken by another record after a rename stays with it when the first is deleted', () => {
    const table = records();
    table.set({ id: '1', org: 'a', name: 'web' });
    table.set({ id: '1', org: 'a', name: 'api' });
    table.set({ id: '2', org: 'a', name: 'web' });
    expect(table.delete('1')).toBe(true);
    expect(table.byName('a', 'web')?.id).toBe('2');
    expect(table.byName('a', 'api')).toBeUndefined();
    expect(table.delete('1')).toBe(false);
    expect([...table.values()].map((r) => r.id)).toEqual(['2']);
  });
});
