/** Generates the files, by path relative to the output directory; writes them into `outDir` when given. */
export declare function generate(outDir?: string): Promise<Map<string, string>>;
/** The committed generated files, by relative path. */
export declare function committed(): Map<string, string>;
export declare const GEN_FLAGS: readonly string[];
