/**
 * Request labels (the object a retry line names) across concurrent changes: the async context is
 * switched off whenever no labelled run is under way, which must never cost a running change its label.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  currentRequestLabel,
  requestLabelsActive,
  withRequestLabel,
} from '../../src/common/request-label.js';

describe('withRequestLabel', () => {
  it('keeps each change its own label while others start and end around it', async () => {
    const seen: (string | undefined)[] = [];
    const slow = withRequestLabel('AclRole/slow', async () => {
      await delay(20);
      seen.push(currentRequestLabel());
      await delay(1);
      return currentRequestLabel();
    });
    // A change that ends while the slow one is still waiting.
    await withRequestLabel('AclRole/quick', async () => {
      await delay(1);
      seen.push(currentRequestLabel());
    });
    expect(await slow).toBe('AclRole/slow');
    expect(seen).toEqual(['AclRole/quick', 'AclRole/slow']);
  });

  it('switches the context off once every change settled, failed ones included, and on again for the next', async () => {
    await expect(
      withRequestLabel('Job/broken', async () => {
        await delay(1);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(() =>
      withRequestLabel('Job/sync', () => {
        throw new Error('at once');
      }),
    ).toThrow('at once');
    expect(requestLabelsActive()).toBe(false);
    expect(currentRequestLabel()).toBeUndefined();
    expect(await withRequestLabel('Job/next', async () => (await delay(1), currentRequestLabel()))).toBe(
      'Job/next',
    );
    expect(requestLabelsActive()).toBe(false);
  });
});
