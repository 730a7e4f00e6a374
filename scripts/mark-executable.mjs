// npm links `bin` entries but a plain `node dist/cli/main.js` clone needs the mode bit too.
import { chmodSync } from 'node:fs';

chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
