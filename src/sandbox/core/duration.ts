/** The sandbox reads Go durations (`?wait=`, `30s`) with the parser every layer shares. */
export { parseGoDuration } from '../../common/go-duration.js';
