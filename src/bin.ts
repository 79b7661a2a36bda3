#!/usr/bin/env node
// First: refuses a Node older than 22.19 before the rest of the CLI loads (src/node-check.ts).
import './node-check.js';
// The default import: a named one fails to link on a Node without it, before the version check above can say so.
import nodeModule from 'node:module';

// V8's compiled code of the CLI's modules kept on disk (Node's own cache directory under the
// temp dir; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a later start compiles none of them
// again (~10 % of a start's CPU). Enabled before the CLI is imported, or its modules would be
// compiled already: an ESM graph is compiled as it is linked, before any of it runs.
nodeModule.enableCompileCache();
await import('./cli.js');
