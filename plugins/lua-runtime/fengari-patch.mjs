// An esbuild plugin that gives fengari's `..` (luaV_concat in lvm.js) a size check before it
// allocates, as string.rep and table.concat have (src/lib-string-limits.ts): `s = s .. s` doubles a
// string in one instruction, which no hook sees, so without it a script grew a string outside the
// V8 heap (fengari strings are Uint8Arrays) to gigabytes before failing after 13-23 s. The check is
// the function a runtime host sets as `runnerConcatCheck` on the state's global object (host.ts);
// a state without one concatenates as before. Used by build.mjs (the vendored fengari, main thread
// and Lua workers alike).
import { readFileSync } from 'node:fs';

const ANCHOR = '            let buff = new Uint8Array(tl);\n';
const CHECK = '            if (L.l_G.runnerConcatCheck !== undefined) L.l_G.runnerConcatCheck(L, tl);\n';

export const fengariConcatLimit = {
  name: 'fengari-concat-limit',
  setup(build) {
    build.onLoad({ filter: /fengari[\\/]src[\\/]lvm\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(ANCHOR)) {
        return { errors: [{ text: `${args.path}: luaV_concat changed; update fengari-patch.mjs (its size check)` }] };
      }
      return { contents: text.replace(ANCHOR, CHECK + ANCHOR), loader: 'js' };
    });
  },
};
