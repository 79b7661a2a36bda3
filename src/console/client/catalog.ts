/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Context, View } from './context.js';
import { disclosure, h, pair, replaceChildren, statusBadge, when } from './dom.js';

/** Offers carry no currency: the amount in minor units, as a decimal. */
const minorUnits = (centavos: number): string => (centavos / 100).toFixed(2);

interface Product {
  id: string;
  name: string;
  description?: string | null;
  externalId?: string | null;
  active: boolean;
  deletedAt?: string | null;
  imageUrl?: string | null;
  createdAt: string;
}

interface Offer {
  id: string;
  name: string;
  amount: number;
  billingCycle: string | null;
  createdAt: string;
}

const CYCLES = ['WEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUALLY', 'YEARLY'];

function offerForm(ctx: Context, product: Product, done: () => void): HTMLElement {
  const p = product.id;
  const name = h('input', { id: `of-name-${p}`, type: 'text', required: true, maxlength: 255, autocomplete: 'off' });
  const amount = h('input', { id: `of-amount-${p}`, type: 'number', required: true, min: 1, step: 1, inputmode: 'numeric' });
  const cycle = h('select', { id: `of-cycle-${p}` }, h('option', { value: '' }, 'One-time'), CYCLES.map((c) => h('option', { value: c }, c)));
  const form = h(
    'form',
    { class: 'filters' },
    pair(h('label', { for: `of-name-${p}` }, 'Offer name'), name),
    pair(h('label', { for: `of-amount-${p}` }, 'Amount (centavos)'), amount),
    pair(h('label', { for: `of-cycle-${p}` }, 'Billing cycle'), cycle),
    h('button', { type: 'submit' }, 'Add offer'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const answer = await ctx.api.post('/v2/offers', { productId: product.id, name: name.value, amount: Number(amount.value), ...(cycle.value ? { billingCycle: cycle.value } : {}) });
    if (!answer.ok) return ctx.fail('Creating the offer', answer);
    ctx.notify(`Offer ${name.value} added`, 'ok');
    done();
  });
  return form;
}

async function productCard(ctx: Context, product: Product, redraw: () => void): Promise<HTMLElement> {
  const offers = await ctx.api.all<Offer>(`/v2/products/${encodeURIComponent(product.id)}/offers`);
  return h(
    'article',
    { class: 'card', 'data-product': product.id },
    h('header', { class: 'card-head' }, h('h2', {}, product.name), statusBadge(product.deletedAt ? 'archived' : product.active ? 'active' : 'inactive')),
    h('p', { class: 'meta' }, h('span', { class: 'mono' }, product.id), product.externalId ? ` · external id ${product.externalId}` : '', ` · created ${when(product.createdAt)}`),
    product.description ? h('p', {}, product.description) : null,
    offers.ok && offers.body.length
      ? h('ul', { class: 'offers' }, offers.body.map((o) => h('li', {}, h('strong', {}, o.name), ` ${minorUnits(o.amount)} · ${o.billingCycle ?? 'one-time'} · `, h('span', { class: 'mono small' }, o.id))))
      : h('p', { class: 'muted' }, 'No offers.'),
    product.deletedAt ? null : disclosure(`offer-form:${product.id}`, {}, 'Add an offer', offerForm(ctx, product, redraw)),
  );
}

/** Products and their offers, with forms to add both. */
export const catalogView: View = (ctx) => {
  const list = h('div', { class: 'stack' });
  const name = h('input', { id: 'pr-name', type: 'text', required: true, maxlength: 255, autocomplete: 'off' });
  const form = h('form', { class: 'filters' }, pair(h('label', { for: 'pr-name' }, 'New product name'), name), h('button', { type: 'submit' }, 'Create product'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const answer = await ctx.api.post('/v2/products', { name: name.value });
    if (!answer.ok) return ctx.fail('Creating the product', answer);
    name.value = '';
    ctx.notify('Product created', 'ok');
    void draw();
  });
  async function draw(): Promise<void> {
    const products = await ctx.api.all<Product>('/v2/products');
    if (!products.ok) return ctx.fail('Loading products', products);
    const cards = await Promise.all([...products.body].reverse().map((p) => productCard(ctx, p, () => void draw())));
    replaceChildren(list, cards.length ? cards : h('p', { class: 'empty' }, 'No products yet.'));
  }
  replaceChildren(ctx.root, h('h1', { tabindex: -1 }, 'Products and offers'), form, list);
  void draw();
};
