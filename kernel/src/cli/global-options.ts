/** The options every command accepts, read before commander parses (plugin discovery needs them). */
export interface GlobalOptions {
  dataDir?: string;
  configFile?: string;
  pluginsDirs: string[];
  debug: boolean;
  /** `--ca <file>`: the master's certificate or CA, trusted by commands that call an https:// master. */
  ca?: string;
}

/**
 * Reads `--data-dir`, `--config`, `--plugins-dir` (repeatable), `--ca` and `--debug` wherever they stand.
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
      case '--ca':
        globals.ca = value();
        break;
      case '--debug':
        globals.debug = true;
        break;
    }
  }
  return globals;
}
