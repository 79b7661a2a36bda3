// What the tests import of prebuild-spec.mjs (a build script in plain JavaScript).
export declare const PREBUILT_SPEC: string;
export declare function prebuildSpec(root: string): Promise<boolean>;
