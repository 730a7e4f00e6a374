/**
 * The CLI's words for the settings the engine's and the HTTP layer's errors may ask a user to
 * change: its flags. The engine names its own options unless told these (see `SettingNames`).
 */
import type { SettingNames } from '../common/setting-names.js';

export const CLI_SETTING_NAMES: SettingNames = {
  timeout: '--timeout',
  parallelism: '--parallelism',
  lockTimeout: '--lock-timeout SECONDS',
  targets: '--target',
  excludes: '--exclude',
  prune: '--prune',
  allowEmpty: '--allow-empty',
  maxDeletes: '--max-deletes',
  kinds: '--kind',
  namespace: '--namespace',
  connection: '--connection',
  manifest: '-f',
  allowAddresses: '--allow-address',
  allowEnv: '--allow-env',
  exportDir: '-o',
};
