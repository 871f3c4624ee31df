import { randomBytes } from 'node:crypto';

/**
 * Run ids sort by creation time (a millisecond timestamp in base 36, then randomness), so listing
 * newest first and paginating need no extra column: `r-lx3k9a2b-4f1c9e`.
 */
export function newRunId(now = Date.now()): string {
  return `r-${now.toString(36).padStart(9, '0')}-${randomBytes(4).toString('hex')}`;
}
