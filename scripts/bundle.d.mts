// What the tests import of bundle.mjs (a build script in plain JavaScript).
export declare const ENTRY_POINTS: readonly string[];
export declare const EXTERNAL: readonly string[];
export declare function bundle(root: string): Promise<void>;
/** The modules esbuild wraps made parenthesized function expressions, compiled with their chunk; throws on a wrapper printed another way. */
export function compiledWithTheirChunk(code: string, name?: string): string;
