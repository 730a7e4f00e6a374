/**
 * What each manifest Connection would carry to its service from outside the manifest: values read
 * with `${env:…}` or `${file:…}` (its own address or settings, an object's fields, a PruneScope's
 * namespace or prefix) and the files objects name (a Job's `specFile`, a Workspace's `state`), whose
 * contents go out whole. connection-addresses.ts lets them go only to an address the operator
 * chose; this module only finds them, and knows no service.
 */
import { splitPointer } from '../manifest/pointer.js';
import type { Manifest, ManifestConnection } from '../manifest/types.js';
import { hasLocalFiles } from '../resources/contract.js';
import { childPath } from '../resources/diff-path.js';
import type { Catalog } from './catalog.js';
import type { CarriedValue } from './connection-addresses.js';

/** Metadata that never reaches a service: a value read into it goes nowhere. */
const NOT_SENT = ['/metadata/labels', '/metadata/connection', '/metadata/ensure'];

function isSent(pointer: string): boolean {
  return !NOT_SENT.some((p) => pointer === p || pointer.startsWith(`${p}/`));
}

const READ = 'is read from outside the manifest (${env:…} or ${file:…})';

export function carriedValues(manifest: Manifest, catalog: Catalog): CarriedValue[] {
  const carried: CarriedValue[] = [];
  const connectionOf = (service: string | undefined, name: string | undefined) =>
    name === undefined
      ? undefined
      : manifest.connections.find((c: ManifestConnection) => c.name === name && c.service === service);
  for (const connection of manifest.connections) {
    if (connection.addressFromOutside)
      carried.push({
        connection,
        position: connection.addressPosition ?? connection.source,
        holder: `the address of connection "${connection.name}"`,
        what: READ,
      });
    const setting = connection.settingFromOutside;
    if (setting)
      carried.push({
        connection,
        position: setting.position,
        holder: `the ${setting.key} of connection "${connection.name}"`,
        what: READ,
      });
  }
  for (const scope of manifest.pruneScopes) {
    const connection = connectionOf(catalog.kind(scope.kind)?.service, scope.connection);
    if (connection && scope.valueFromOutside)
      carried.push({
        connection,
        position: scope.valueFromOutside.position,
        holder: `the ${scope.valueFromOutside.key} of PruneScope "${scope.name}"`,
        what: READ,
      });
  }
  for (const resource of manifest.resources) {
    const kind = catalog.kind(resource.kind);
    // A Connection that is not declared is reported as such by the load; nothing is sent through it.
    const connection = connectionOf(kind?.service, resource.connection);
    if (!connection) continue;
    // A name filled from a variable is not quoted: messages never show such a value.
    const object = resource.sensitivePointers.has('/metadata/name')
      ? resource.kind
      : `${resource.kind} "${resource.name}"`;
    for (const pointer of [...resource.sensitivePointers].filter(isSent))
      carried.push({
        connection,
        position: resource.locate(pointer),
        holder: `${object} ${splitPointer(pointer).reduce(childPath, '')}`,
        what: READ,
      });
    // The file's contents go out whole (a plan sends a job's spec file to be parsed): a file of the
    // runner's (`.git/config` with a checkout's credentials) is as much from outside as `${file:}`.
    for (const field of hasLocalFiles(kind) ? kind.localFiles : [])
      if (resource.spec[field] !== undefined)
        carried.push({
          connection,
          position: resource.locate(`/spec/${field}`),
          holder: `${object} spec.${field}`,
          what: 'names a file of the runner (its contents are sent whole)',
        });
  }
  return carried;
}
