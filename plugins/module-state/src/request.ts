import {
  InvalidInputError,
  luaType,
  STATE_OPERATIONS,
  STATE_SCOPES,
  type LuaValue,
  type StateRequest,
} from '@runner/plugin-sdk';
import { canonicalJson } from './canonical-json.js';

export const MAX_VALUE_BYTES = 1024 * 1024;
export const MAX_KEY_LENGTH = 512;

/** The key of a call; `position` is its argument number, for the message. */
export function checkKey(fn: string, key: unknown, position = 1): string {
  if (typeof key !== 'string' || key === '') {
    throw new InvalidInputError(
      `state.${fn}: argument ${position} must be a key (a non-empty string), got ${key === '' ? 'an empty string' : luaType(key as LuaValue)}`,
      { field: 'key' },
    );
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw new InvalidInputError(`state.${fn}: key is ${key.length} characters long (at most ${MAX_KEY_LENGTH})`, {
      field: 'key',
    });
  }
  return key;
}

/** A value as canonical JSON (so comparing values is comparing strings); undefined for nil. */
export function encodeValue(fn: string, value: LuaValue | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  let json: string;
  try {
    json = canonicalJson(value, `state.${fn}: argument 2`);
  } catch (error) {
    throw new InvalidInputError((error as Error).message, { field: 'value' });
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_VALUE_BYTES) {
    throw new InvalidInputError(`state.${fn}: value is ${bytes} bytes as JSON (at most ${MAX_VALUE_BYTES})`, {
      field: 'value',
    });
  }
  return json;
}

/**
 * Checks a request that did not come from this process's Lua module (an agent's, read off the
 * wire): operation, scope and key as the module itself would have allowed them.
 */
export function checkRequest(request: StateRequest): StateRequest {
  const { operation, scope } = request;
  if (!(STATE_OPERATIONS as readonly string[]).includes(operation)) {
    throw new InvalidInputError(
      `state: unknown operation ${JSON.stringify(operation)} (known: ${STATE_OPERATIONS.join(', ')})`,
      { field: 'operation' },
    );
  }
  if (!(STATE_SCOPES as readonly string[]).includes(scope)) {
    throw new InvalidInputError(
      `state.${operation}: option scope must be "workflow", "task" or "global", got ${JSON.stringify(scope)}`,
      { field: 'scope' },
    );
  }
  if (operation !== 'keys') checkKey(operation, request.key);
  return request;
}
