import { InvalidInputError, type LuaCallContext, type LuaValue } from '@runner/plugin-sdk';
import { cancelled, raceAbort } from './abort.js';
import { describe, readOptions, requireString } from './args.js';

const FAMILIES: Readonly<Record<string, 0 | 4 | 6>> = {
  any: 0,
  '0': 0,
  '4': 4,
  ipv4: 4,
  inet: 4,
  '6': 6,
  ipv6: 6,
  inet6: 6,
};

/** `net.lookup(name [, {family}])`: the addresses the system resolver gives, as `getaddrinfo` orders them. */
export async function lookup(call: LuaCallContext, nameArg: LuaValue, optsArg: LuaValue): Promise<LuaValue> {
  const fn = 'net.lookup';
  const name = requireString(fn, 1, 'host name', nameArg);
  const opts = readOptions(fn, 2, optsArg, ['family']);
  const family = opts.family === null || opts.family === undefined ? 0 : FAMILIES[String(opts.family).toLowerCase()];
  if (family === undefined) {
    throw new InvalidInputError(`${fn}: family must be 4, 6, "ipv4", "ipv6" or "any", got ${describe(opts.family)}`);
  }
  try {
    // Loaded on the first lookup: every run sets the module up, few look a name up.
    const { lookup: dnsLookup } = await import('node:dns/promises');
    // getaddrinfo cannot be cancelled; the race only stops the script from waiting on it.
    const found = await raceAbort(dnsLookup(name, { all: true, family, verbatim: true }), call.signal, () =>
      cancelled(fn, `lookup of "${name}"`, call.signal),
    );
    return [...new Set(found.map((entry) => entry.address))];
  } catch (error) {
    if (call.signal.aborted) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') {
      const which = family === 0 ? '' : ` to an IPv${family} address`;
      throw new Error(`${fn}: "${name}" does not resolve${which} (${code})`, { cause: error });
    }
    throw new Error(`${fn}: cannot resolve "${name}": ${(error as Error).message}`, { cause: error });
  }
}
