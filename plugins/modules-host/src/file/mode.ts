import { luaType } from '@runner/plugin-sdk';

/**
 * A permission mode written as a string of octal digits: "0644", "644", "0o755", "1777".
 * Numbers are refused: Lua has no octal literals, so `mode = 0644` is the decimal 644 (which is
 * 0o1204), the classic Ansible trap.
 */
export function parseMode(value: unknown, where: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') {
    throw new Error(`${where} must be a string of octal digits such as "0644" (a Lua number ${value} is decimal)`);
  }
  if (typeof value !== 'string') throw new Error(`${where} must be a string such as "0644", got ${luaType(value)}`);
  const match = /^(?:0o)?([0-7]{3,4})$/.exec(value.trim());
  if (!match) throw new Error(`${where}: invalid mode ${JSON.stringify(value)} (use octal digits such as "0644")`);
  return parseInt(match[1], 8);
}

/** 0o644 → "0644". */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}
