// What the tests import of prebuild-validators.mjs (a build script in plain JavaScript).
export declare const PREBUILT_VALIDATORS: string;
export declare function prebuildValidators(root: string): Promise<boolean>;
