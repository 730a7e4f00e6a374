/**
 * The values read from outside the manifest (`${env:…}`, `${file:…}`) that each manifest Connection
 * would carry to its service: a Connection's own settings, and every value of the objects that name
 * it. connection-addresses.ts lets them go only to an address the operator chose; this module only
 * finds them, and knows no service.
 */
import { splitPointer } from '../manifest/pointer.js';
import type { Manifest, ManifestConnection } from '../manifest/types.js';
import { childPath } from '../resources/diff-path.js';
import type { Catalog } from './catalog.js';
import type { CarriedValue } from './connection-addresses.js';

/** Metadata that never reaches a service: a value read into it goes nowhere. */
const NOT_SENT = ['/metadata/labels', '/metadata/connection', '/metadata/ensure'];

function isSent(pointer: string): boolean {
  return !NOT_SENT.some((p) => pointer === p || pointer.startsWith(`${p}/`));
}

export function carriedValues(manifest: Manifest, catalog: Catalog): CarriedValue[] {
  const carried: CarriedValue[] = [];
  for (const connection of manifest.connections) {
    const setting = connection.settingFromOutside;
    if (setting)
      carried.push({
        connection,
        position: setting.position,
        holder: `the ${setting.key} of connection "${connection.name}"`,
      });
  }
  for (const resource of manifest.resources) {
    const sent = [...resource.sensitivePointers].filter(isSent);
    if (resource.connection === undefined || sent.length === 0) continue;
    const service = catalog.kind(resource.kind)?.service;
    const connection = manifest.connections.find(
      (c: ManifestConnection) => c.name === resource.connection && c.service === service,
    );
    // A Connection that is not declared is reported as such by the load; nothing is sent through it.
    if (!connection) continue;
    // A name filled from a variable is not quoted: messages never show such a value.
    const object = resource.sensitivePointers.has('/metadata/name')
      ? resource.kind
      : `${resource.kind} "${resource.name}"`;
    for (const pointer of sent)
      carried.push({
        connection,
        position: resource.locate(pointer),
        holder: `${object} ${splitPointer(pointer).reduce(childPath, '')}`,
      });
  }
  return carried;
}
