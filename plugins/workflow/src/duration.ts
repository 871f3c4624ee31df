// The grammar lives in the SDK, shared with the engine and the modules.
export { parseDuration, formatDuration } from '@runner/plugin-sdk';
