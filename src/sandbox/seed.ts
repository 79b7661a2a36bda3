import type { Unit } from '../store/ports.js';
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import type { Accounts, FixedAccount } from '../accounts/accounts.js';
import type { Offers } from '../catalog/offers.js';
import type { Products } from '../catalog/products.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { OfferCreate, ProductCreate, PurchaseRequest } from '../spec/types.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface SeedProduct extends ProductCreate {
  /** what makes a seeded product the same one on the next start */
  externalId: string;
  active?: boolean;
  offers?: Omit<OfferCreate, 'productId'>[];
}

export type SeedTransaction = PurchaseRequest & {
  /** what makes a seeded transaction the same one on the next start */
  externalId: string;
  /** pay it once created (sandbox control `pay`) */
  paid?: boolean;
};

export interface SeedAccount extends FixedAccount {
  products?: SeedProduct[];
  transactions?: SeedTransaction[];
}

export interface SeedFile {
  accounts: SeedAccount[];
}

export interface SeedScope {
  accounts: Accounts;
  products: Products;
  offers: Offers;
  transactions: Transactions;
  transitions: Transitions;
}

export interface SeedResult {
  accounts: number;
  created: { products: number; offers: number; transactions: number };
}

/**
 * The file's own layout; products, offers and purchases inside it are checked against
 * openapi.yaml's ProductCreate, OfferCreate and PurchaseRequest, the schemas the API
 * validates with, so a fixture is refused for exactly what a request would be.
 */
const FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['accounts'],
  properties: {
    accounts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'secretKey'],
        properties: {
          id: { type: 'string', pattern: '^acc_[A-Za-z0-9_-]{1,64}$' },
          secretKey: { type: 'string', pattern: '^\\S{8,255}$' },
          name: { type: 'string', minLength: 1, maxLength: 255 },
          permissions: { type: 'array', uniqueItems: true, items: { enum: ['isInvoiceAvailable', 'createTransaction'] } },
          webhookUrl: { oneOf: [{ type: 'string', pattern: '^https?://', maxLength: 2048 }, { type: 'null' }] },
          webhookSecret: { type: 'string', minLength: 8, maxLength: 255 },
          products: {
            type: 'array',
            items: {
              type: 'object',
              required: ['externalId'],
              properties: { active: { type: 'boolean' }, offers: { type: 'array', items: { type: 'object' } } },
            },
          },
          transactions: {
            type: 'array',
            items: { type: 'object', required: ['externalId'], properties: { paid: { type: 'boolean' } } },
          },
        },
      },
    },
  },
} as const;

interface Validators {
  file: ValidateFunction;
  product: ValidateFunction;
  offer: ValidateFunction;
  purchase: ValidateFunction;
}

function validators(document: OpenApiDocument): Validators {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  const schema = (name: string): object => {
    const found = document.components?.schemas?.[name];
    if (found === undefined) throw new Error(`openapi.yaml has no schema ${name}`);
    return found as object;
  };
  return { file: ajv.compile(FILE_SCHEMA), product: ajv.compile(schema('ProductCreate')), offer: ajv.compile(schema('OfferCreate')), purchase: ajv.compile(schema('PurchaseRequest')) };
}

function check(validate: ValidateFunction, value: unknown, file: string, where: string): void {
  if (validate(value)) return;
  const error = validate.errors?.[0];
  const path = [where, ...(error?.instancePath ?? '').split('/').filter(Boolean)].filter(Boolean).join('.');
  throw new Error(`seed file ${file}: ${path || 'the file'} ${error?.message ?? 'is invalid'}`);
}

/** Reads a seed file (YAML, or JSON, which YAML reads too) and checks all of it before anything is stored. */
export function loadSeedFile(file: string, document: OpenApiDocument): SeedFile {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`seed file ${file}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const v = validators(document);
  check(v.file, raw, file, '');
  const seed = raw as SeedFile;
  const ids = new Set<string>();
  seed.accounts.forEach((account, a) => {
    if (ids.has(account.id)) throw new Error(`seed file ${file}: accounts.${a}.id ${account.id} appears twice`);
    ids.add(account.id);
    account.products?.forEach((product, p) => {
      const { offers, active: _active, ...create } = product;
      check(v.product, create, file, `accounts.${a}.products.${p}`);
      offers?.forEach((offer, o) => check(v.offer, { ...offer, productId: 'prd_00000000-0000-4000-8000-000000000000' }, file, `accounts.${a}.products.${p}.offers.${o}`));
    });
    account.transactions?.forEach((transaction, t) => {
      const { paid: _paid, ...purchase } = transaction;
      check(v.purchase, purchase, file, `accounts.${a}.transactions.${t}`);
    });
  });
  return seed;
}

/**
 * The first webhook URL of the file the target policy refuses (`refusal` says why), named by
 * its place in the file: refused where it is given, like the API's.
 */
export function seedTargetRefusal(seed: SeedFile, refusal: (url: string) => string | undefined): string | undefined {
  for (const [a, account] of seed.accounts.entries()) {
    const own = account.webhookUrl ? refusal(account.webhookUrl) : undefined;
    if (own) return `accounts.${a}.webhookUrl ${own}`;
    for (const [t, transaction] of (account.transactions ?? []).entries()) {
      const postback = transaction.postbackUrl ? refusal(transaction.postbackUrl) : undefined;
      if (postback) return `accounts.${a}.transactions.${t}.postbackUrl ${postback}`;
    }
  }
  return undefined;
}

/**
 * Brings the store to what the seed file describes, idempotently: accounts by id,
 * products by externalId, offers by name within their product, transactions by
 * externalId. What exists is updated to the fixture (accounts, products) or left
 * alone (offers, transactions: their history is theirs); nothing else is touched.
 */
export async function applySeed(unit: Unit, seed: SeedFile, scope: SeedScope): Promise<SeedResult> {
  const created = { products: 0, offers: 0, transactions: 0 };
  for (const fixture of seed.accounts) {
    const { products = [], transactions = [], ...fixed } = fixture;
    const account = await scope.accounts.upsertFixed(unit, fixed);
    for (const { offers = [], active, ...input } of products) {
      let product = await scope.products.findByExternalId(unit, account, input.externalId);
      if (product === undefined) {
        product = await scope.products.create(unit, account, input);
        created.products++;
      }
      const patch = {
        ...(product.name !== input.name.trim() && { name: input.name }),
        ...(input.description !== undefined && product.description !== input.description && { description: input.description }),
        ...(input.metadata !== undefined && JSON.stringify(product.metadata) !== JSON.stringify(input.metadata) && { metadata: input.metadata }),
        ...(active !== undefined && product.active !== active && { active }),
      };
      if (Object.keys(patch).length > 0) product = await scope.products.update(unit, account, product.id, patch);
      const names = await scope.offers.namesOf(unit, account, product.id);
      for (const offer of offers) {
        if (names.has(offer.name.trim())) continue;
        await scope.offers.create(unit, account, { ...offer, productId: product.id });
        names.add(offer.name.trim());
        created.offers++;
      }
    }
    for (const { paid, ...purchase } of transactions) {
      const seeded = await scope.transactions.getByExternalId(unit, account, purchase.externalId).then(
        () => true,
        () => false,
      );
      if (seeded) continue;
      const record = await scope.transactions.create(unit, account, purchase);
      if (paid && record.view.status === 'PENDING') await scope.transitions.pay(unit, account.id, record.id);
      created.transactions++;
    }
  }
  return { accounts: seed.accounts.length, created };
}
