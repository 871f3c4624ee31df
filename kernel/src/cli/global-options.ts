/** The options every command accepts, read before commander parses (plugin discovery needs them). */
export interface GlobalOptions {
  dataDir?: string;
  configFile?: string;
  pluginsDirs: string[];
  debug: boolean;
}

/**
 * Reads `--data-dir`, `--config`, `--plugins-dir` (repeatable) and `--debug` wherever they stand.
 * Commander still parses them for `--help` and validation; this only gets them early.
 */
export function prescanGlobals(argv: readonly string[]): GlobalOptions {
  const globals: GlobalOptions = { pluginsDirs: [], debug: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') break;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--data-dir':
        globals.dataDir = value();
        break;
      case '--config':
        globals.configFile = value();
        break;
      case '--plugins-dir': {
        const dir = value();
        if (dir) globals.pluginsDirs.push(dir);
        break;
      }
      case '--debug':
        globals.debug = true;
        break;
    }
  }
  return globals;
}
