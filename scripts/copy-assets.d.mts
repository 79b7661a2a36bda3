// What the tests import of copy-assets.mjs (a build script in plain JavaScript).
export declare const DOCS_ASSETS: readonly string[];
export declare const DOCS_ASSETS_DIR: string;
export declare function copyAssets(root: string): string[];
