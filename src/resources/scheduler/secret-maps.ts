/**
 * Where a job's own names say what a value is: its environment, its metadata, and a driver's registry
 * login (`auth: { username, password }`). The Job kind masks the entries of these maps whose names
 * say secret in every plan; the operator commands (`converge job … --json`) mask them too. A module of
 * its own, so those commands need not load the kind.
 */
export const JOB_SECRET_MAPS: readonly string[] = [
  'Meta',
  'TaskGroups.Meta',
  'TaskGroups.Tasks.Env',
  'TaskGroups.Tasks.Meta',
  'TaskGroups.Tasks.Config.auth',
];
