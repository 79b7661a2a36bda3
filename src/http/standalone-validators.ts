import { _ } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { ValidationContext } from 'openapi-backend';
import type { Routes } from './match.js';
import { ajvVersion, type PrebuiltManifest, type ValidatorVariant } from './prebuilt-validators.js';
import { createSpecValidator } from './validate.js';

// ajv's standalone export is CommonJS with a default export that NodeNext sees as the module object.
const standaloneCode = (standaloneModule as unknown as { default: typeof standaloneModule.default }).default;

/** The compiled code refers to the formats by the module the run-time Ajv (src/http/validator.ts) takes them from. */
const FORMATS = _`require("ajv-formats/dist/formats").fullFormats`;

/** Each openapi-backend validator of an operation, in its order: the body's (when it has one), then the parameters'. */
const ORDER: Record<number, ValidationContext[]> = {
  1: [ValidationContext.Params],
  2: [ValidationContext.RequestBody, ValidationContext.Params],
};

/**
 * Every operation's request validators, both variants, as Ajv standalone modules (CommonJS, one
 * file each) with the manifest that names them: what `npm run build` writes to dist/validators/.
 * Compiled by the very validators a sandbox makes (createSpecValidator, the same Ajv options),
 * so a prebuilt file checks and words every error as compiling at run time would.
 */
export function standaloneValidators(routes: Routes, sha256: string): { manifest: PrebuiltManifest; files: Map<string, string> } {
  const manifest: PrebuiltManifest = { sha256, ajv: ajvVersion(), operations: {} };
  const files = new Map<string, string>();
  for (const variant of ['first', 'every'] as const satisfies readonly ValidatorVariant[]) {
    let made: Array<{ ajv: Ajv2020; context: ValidationContext }> = [];
    const validator = createSpecValidator(routes, {
      allErrors: variant === 'every',
      ajv: { code: { source: true, formats: FORMATS } },
      onAjv: (ajv, context) => made.push({ ajv, context }),
    });
    for (const operation of routes.operations) {
      const { operationId } = operation;
      if (operationId === undefined) continue;
      made = [];
      const validators = validator.buildRequestValidatorsForOperation(operation) ?? [];
      // Each function's code is in the Ajv that compiled it: pair them, and refuse to guess.
      const contexts = made.map(({ context }) => context);
      if (JSON.stringify(contexts) !== JSON.stringify(ORDER[validators.length])) {
        throw new Error(`${operationId}: openapi-backend built ${validators.length} validators with Ajvs for ${contexts.join(', ')}; the build cannot tell which compiled which`);
      }
      const names = validators.map((validate, i) => {
        const file = `${operationId}.${variant}.${i}.cjs`;
        files.set(file, standaloneCode(made[i]!.ajv, validate));
        return file;
      });
      const entry = (manifest.operations[operationId] ??= { first: [], every: [] });
      entry[variant] = names;
    }
  }
  return { manifest, files };
}
