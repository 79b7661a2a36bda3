// What the tests import of bundle.mjs (a build script in plain JavaScript).
export declare const ENTRY_POINTS: readonly string[];
export declare const EXTERNAL: readonly string[];
export declare function bundle(root: string): Promise<void>;
