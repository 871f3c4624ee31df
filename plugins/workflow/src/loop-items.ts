import { excerpt, InvalidInputError } from '@runner/plugin-sdk';
import { parse } from 'yaml';
import { isPlainObject } from './objects.js';
import type { LoopItem } from './types.js';

/**
 * The items of a `loop` written as a template, from its rendered text:
 *
 * - text starting with `[` or `- ` is read as a YAML (or JSON) list: `["a", "b"]`, `[a, b]`, or
 *   one `- item` a line; its items must be scalars or mappings;
 * - any other text is split at commas and newlines, each part trimmed and empty parts dropped,
 *   so a var holding `web-1, web-2` (vars are strings) and the way Jinja prints a list
 *   (`web-1,web-2`) both give two items;
 * - empty text gives no items (the task does not run).
 */
export function loopItemsFromText(rendered: string): LoopItem[] {
  const text = rendered.trim();
  if (text === '') return [];
  if (text.startsWith('{')) {
    throw new InvalidInputError(`loop rendered a mapping, not a list: ${JSON.stringify(excerpt(text))}`);
  }
  if (!text.startsWith('[') && !/^-(\s|$)/.test(text)) {
    return text
      .split(/[,\n]/)
      .map((part) => part.trim())
      .filter((part) => part !== '');
  }
  let value: unknown;
  try {
    value = parse(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new InvalidInputError(
      `loop rendered text that is not a list: ${JSON.stringify(excerpt(text))}: ${(error as Error).message.split('\n')[0]}`,
      {
        cause: error,
      },
    );
  }
  if (!Array.isArray(value)) {
    throw new InvalidInputError(`loop rendered text that is not a list: ${JSON.stringify(excerpt(text))}`);
  }
  value.forEach((item, i) => {
    const ok = ['string', 'number', 'boolean'].includes(typeof item) || isPlainObject(item);
    if (!ok) {
      const found = item === null ? 'null' : Array.isArray(item) ? 'a list' : typeof item;
      throw new InvalidInputError(`loop item ${i + 1} must be a scalar or a mapping, found ${found}`);
    }
  });
  return value as LoopItem[];
}
