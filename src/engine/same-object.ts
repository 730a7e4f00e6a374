/**
 * One live object reached under two addresses. Two Connections (or a Connection and the
 * environment's address) pointing at the same service make `AclRole@eu/default/web` and
 * `AclRole@eu2/default/web` two objects to Converge and one to the service: the applies then flip
 * it between the two documents forever, and a prune that drops one document deletes the object the
 * other still declares (the update and the deletion of one id in one plan). Refused at plan time,
 * naming both addresses, before anything is sent.
 */
import type { PlanProblem } from '../resources/contract.js';
import type { Change, Plan } from '../planner/types.js';
import type { Catalog } from './catalog.js';

/** Where each `service` / `service@connection` of the run lives (`ServiceConnections.addresses`). */
type Addresses = Readonly<Record<string, { address: string }>>;

export function sameObjectProblems(plan: Plan, catalog: Catalog, addresses: Addresses): PlanProblem[] {
  // Only objects on different connections can be one object twice: a plan on the environment's
  // connections alone (most) has nothing to look at, and 10,000 objects need no map of keys.
  if (!plan.changes.some((c) => c.key.connection !== undefined)) return [];
  // An object is the same one when it lives at the same service address under the same kind and,
  // there, has the same id, or (not read yet: a create) the same namespace and name.
  const seen = new Map<string, Change>();
  const problems: PlanProblem[] = [];
  const reported = new Set<string>();
  for (const change of plan.changes) {
    const service = catalog.kind(change.key.kind)?.service;
    if (!service) continue;
    const where = addresses[change.key.connection ? `${service}@${change.key.connection}` : service];
    if (!where) continue;
    // In its namespace: a job's id is its name, the same in every namespace.
    const namespace = change.key.namespace ?? '';
    const identities = [
      ...(change.id !== undefined ? [`id\u0000${namespace}\u0000${change.id}`] : []),
      `name\u0000${namespace}\u0000${change.key.name}`,
    ];
    for (const identity of identities) {
      const id = `${change.key.kind}\u0000${where.address}\u0000${identity}`;
      const first = seen.get(id);
      if (!first) {
        seen.set(id, change);
        continue;
      }
      // On one connection, two addresses are two objects (the manifest's duplicate check covers the rest).
      if ((first.key.connection ?? '') === (change.key.connection ?? '') || reported.has(change.address))
        continue;
      reported.add(change.address);
      const declared = change.desired?.resource ?? first.desired?.resource;
      const position = declared?.locate('/metadata/connection');
      problems.push({
        key: change.key,
        message: `${change.address} and ${first.address} are one object: both connections reach the same ${service} service (${where.address})${identity.startsWith('id') ? `, where it has id ${change.id}` : ''}. Converge would manage it twice (each apply undoing the other, a prune deleting what the other declares): declare it once, on one connection`,
        ...(position ? { position } : {}),
      });
      break;
    }
  }
  return problems;
}
