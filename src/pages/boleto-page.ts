import { createHash } from 'node:crypto';
import { formatDigitableLine, mod10CheckDigit } from '../rails/boleto.js';
import type { components } from '../spec/openapi-types.js';
import type { Transaction } from '../spec/types.js';
import type { PurchaseDetails, TransactionRecord } from '../transactions/transaction-record.js';
import { cpfCnpjLabel, formatBrl, formatCpfCnpj, formatDateBr } from './format.js';
import { html, raw, type SafeHtml } from './html.js';
import { itf25Svg } from './itf.js';
import { renderDocument } from './layout.js';
import { PAYER_ACTIONS_CSS, payerActions, payerResult } from './payer-actions.js';
import { boletoPath, pixPagePath, pixQrPath, withToken } from './paths.js';

export { itf25Bars, itf25Svg } from './itf.js';

type BoletoInstruction = components['schemas']['BoletoInstruction'];

/**
 * The instruction only counts as filled when both codes have their exact shapes: a half-written one
 * would print a barcode no bank could read, so it gets the "registro pendente" page instead.
 */
export function boletoInstructionOf(view: Transaction): BoletoInstruction | null {
  const instruction: unknown = 'paymentInstruction' in view ? view.paymentInstruction : undefined;
  if (typeof instruction !== 'object' || instruction === null) return null;
  const fields = instruction as Partial<Record<keyof BoletoInstruction, unknown>>;
  const filled =
    typeof fields.boletoBarcode === 'string' &&
    /^\d{44}$/.test(fields.boletoBarcode) &&
    typeof fields.boletoDigitableLine === 'string' &&
    /^\d{47}$/.test(fields.boletoDigitableLine) &&
    typeof fields.dueDate === 'string';
  return filled ? (instruction as BoletoInstruction) : null;
}

function pixCodeOf(view: Transaction): string {
  return 'pixCode' in view && typeof view.pixCode === 'string' ? view.pixCode : '';
}

const BANK_CODE = '341-7';
const STAMPS: Partial<Record<Transaction['status'], { text: string; tone: 'ok' | 'bad' }>> = {
  APPROVED: { text: 'Pago', tone: 'ok' },
  BLOCKED: { text: 'Cancelado', tone: 'bad' },
  REFUNDED: { text: 'Estornado', tone: 'bad' },
  CHARGEBACK: { text: 'Contestado', tone: 'bad' },
};

function stamp(view: Transaction): SafeHtml | null {
  // A charge that ran out of time is BLOCKED too; the payer knows it as "overdue".
  const s = view.statusReason === 'EXPIRED' ? { text: 'Vencido', tone: 'bad' as const } : STAMPS[view.status];
  if (!s) return null;
  const rail = 'paidRail' in view ? view.paidRail : null;
  const via = view.status === 'APPROVED' && rail === 'PIX' ? 'via Pix' : view.status === 'APPROVED' && rail === 'BOLETO' ? 'via boleto' : '';
  return html`<div class="stamp ${s.tone}" role="status"><span class="stamp-text">${s.text}</span>${via && html`<small>${via}</small>`}</div>`;
}

function addressLines(address: PurchaseDetails['boletoAddress']): string[] {
  if (!address) return [];
  const street = [address.address, address.number].filter(Boolean).join(', ');
  const zip = /^\d{8}$/.test(address.zipCode) ? `${address.zipCode.slice(0, 5)}-${address.zipCode.slice(5)}` : address.zipCode;
  return [
    [street, address.complement].filter(Boolean).join(' - '),
    `${address.district} - ${address.city}/${address.uf} - CEP ${zip}`,
  ];
}

/** A beneficiary code that stays the same for the account, in Itaú's agência/conta-DAC shape. */
function beneficiaryCode(accountId: string): string {
  const hex = createHash('sha256').update(`boleto-beneficiary:${accountId}`).digest('hex');
  const account = (BigInt(`0x${hex}`) % 100_000n).toString().padStart(5, '0');
  return `0001/${account}-${mod10CheckDigit(`0001${account}`)}`;
}

function pixSection(record: TransactionRecord, code: string): SafeHtml {
  const token = record.payerToken ?? '';
  return html`<section class="pix">
<h2>Pague com Pix</h2>
<div class="pix-body">
<img src="${withToken(pixQrPath(record.id), token)}" width="180" height="180" alt="QR Code Pix">
<div class="pix-copy">
<label for="pix-code">Pix copia e cola</label>
<textarea id="pix-code" readonly rows="5" spellcheck="false">${code}</textarea>
<p class="small">Pago por Pix, o boleto deixa de valer; pago o boleto, o Pix deixa de valer.</p>
<p class="small noprint"><a href="${withToken(pixPagePath(record.id), token)}">Página Pix com botões do sandbox</a></p>
</div>
</div>
</section>`;
}

function field(label: string, value: SafeHtml | string, cls = ''): SafeHtml {
  return html`<td class="${cls}"><span class="label">${label}</span><span class="value">${value}</span></td>`;
}

function registrationPendingPage(record: TransactionRecord, merchantName: string): string {
  const { view } = record;
  const pending = view.status === 'PENDING';
  const code = pixCodeOf(view);
  const body = html`<main class="sheet">
<p class="tag noprint">Sandbox · boleto de teste</p>
${stamp(view)}
<section class="waiting">
<h1>Registro pendente</h1>
<p>O boleto de <strong>${merchantName}</strong> no valor de <strong>${formatBrl(view.amount)}</strong> ainda está sendo registrado no banco.</p>
${pending && html`<p class="small">Esta página se atualiza sozinha em alguns segundos.</p>`}
<p class="small">Transação <span class="mono">${record.id}</span></p>
</section>
${pending && code && pixSection(record, code)}
</main>`;
  return renderDocument({
    title: `Boleto ${record.id} · registro pendente`,
    lang: 'pt-BR',
    css: CSS,
    body,
    ...(pending ? { refreshSeconds: 3 } : {}),
  });
}

/**
 * The printable page a boleto's `boletoUrl` points to: receipt stub and ficha de compensação in the
 * FEBRABAN layout, with the ITF barcode drawn as SVG so it prints sharp at any zoom.
 */
export function renderBoletoPage(record: TransactionRecord, merchantName: string, result?: string): string {
  const { view, details } = record;
  const instruction = boletoInstructionOf(view);
  if (!instruction) return registrationPendingPage(record, merchantName);

  const barcode = instruction.boletoBarcode;
  const line = formatDigitableLine(instruction.boletoDigitableLine);
  // Free field as instructions.ts lays it out: wallet (3 digits), then the nosso número.
  const wallet = barcode.slice(19, 22);
  const nossoNumero = `${wallet}/${barcode.slice(22).replace(/^0+(?=\d{8})/, '')}`;
  const dueDate = formatDateBr(instruction.dueDate);
  const issued = formatDateBr(view.createdAt);
  const amount = formatBrl(view.amount);
  const withDocument = (name: string, document: string | null): SafeHtml =>
    html`${name}${document && html` · ${cpfCnpjLabel(document)} ${formatCpfCnpj(document)}`}`;
  const beneficiary = withDocument(merchantName, details.responsibleDocument);
  const payer = withDocument(details.name, details.cpf);
  const address = addressLines(details.boletoAddress);
  const code = pixCodeOf(view);
  const pending = view.status === 'PENDING';

  const header = (title: string): SafeHtml => html`<div class="slip-head">
<span class="bank">Banco Sandbox</span><span class="bank-code">${BANK_CODE}</span><span class="line">${title}</span>
</div>`;

  const body = html`<main class="sheet">
<p class="tag noprint">Sandbox · boleto de teste, sem valor em banco real: pague pelos botões abaixo ou pelo controle do sandbox. Para imprimir: Ctrl+P.</p>
${payerResult(result)}
${stamp(view)}
<section class="receipt">
${header('Recibo do Pagador')}
<table>
<tr>${field('Beneficiário', beneficiary, 'wide')}${field('Vencimento', dueDate, 'right')}</tr>
<tr>${field('Pagador', payer, 'wide')}${field('Valor do documento', amount, 'right strong')}</tr>
<tr>${field('Nosso número', nossoNumero, 'mono')}${field('Nº do documento', record.id, 'right mono')}</tr>
</table>
${details.description && html`<p class="small">Descrição: ${details.description}</p>`}
<p class="small auth">Autenticação mecânica</p>
</section>
<div class="cut" aria-hidden="true">Corte na linha pontilhada</div>
<section class="slip">
${header(line)}
<table>
<tr>${field('Local de pagamento', 'Pagável em qualquer banco até o vencimento', 'wide')}${field('Vencimento', dueDate, 'right strong')}</tr>
<tr>${field('Beneficiário', beneficiary, 'wide')}${field('Agência / Código do beneficiário', beneficiaryCode(record.accountId), 'right mono')}</tr>
</table>
<table>
<tr>${field('Data do documento', issued)}${field('Nº do documento', record.id, 'mono')}${field('Espécie doc.', 'DM')}${field('Aceite', 'N')}${field('Data processamento', issued)}${field('Nosso número', nossoNumero, 'right mono')}</tr>
<tr>${field('Uso do banco', '')}${field('Carteira', wallet)}${field('Espécie', 'R$')}${field('Quantidade', '')}${field('Valor', '')}${field('(=) Valor do documento', amount, 'right strong')}</tr>
</table>
<table>
<tr><td class="wide instructions" rowspan="4"><span class="label">Instruções (texto de responsabilidade do beneficiário)</span>
<span class="value">Não receber após o vencimento.${code && html`<br>Também pode ser pago por Pix (QR Code abaixo).`}${details.description && html`<br>${details.description}`}</span></td>
${field('(-) Desconto / Abatimento', '', 'right')}</tr>
<tr>${field('(+) Mora / Multa', '', 'right')}</tr>
<tr>${field('(+) Outros acréscimos', '', 'right')}</tr>
<tr>${field('(=) Valor cobrado', '', 'right')}</tr>
</table>
<table>
<tr><td class="payer"><span class="label">Pagador</span>
<span class="value">${payer}${address.map((l) => html`<br>${l}`)}</span></td></tr>
</table>
<div class="barcode-row">
${raw(itf25Svg(barcode))}
<span class="small">Autenticação mecânica · <strong>Ficha de Compensação</strong></span>
</div>
</section>
${pending && payerActions(boletoPath(record.id), record.payerToken ?? '', html`Pagar boleto no sandbox <small lang="en">Pay in sandbox</small>`)}
${pending && code && pixSection(record, code)}
</main>`;

  return renderDocument({ title: `Boleto ${merchantName} · ${dueDate} · ${amount}`, lang: 'pt-BR', css: CSS, body });
}

const CSS = `
@page{size:A4;margin:10mm}
*{box-sizing:border-box}
body{margin:0;background:#eceff3;color:#000;font:10pt/1.3 Arial,Helvetica,sans-serif}
.sheet{position:relative;width:190mm;max-width:100%;margin:16px auto;background:#fff;padding:8mm;box-shadow:0 1px 8px rgba(0,0,0,.15)}
.tag{margin:0 0 4mm;font-size:9pt;color:#8a5a00;background:#fff4d6;padding:2mm 3mm;border-radius:2px}
.small{font-size:8pt;margin:1mm 0}
.mono .value,.mono{font-family:"Courier New",Courier,monospace}
/* When the digitable line does not fit beside the bank, it takes the next row whole: never clipped. */
.slip-head{display:flex;flex-wrap:wrap;align-items:flex-end;row-gap:1mm;border-bottom:2px solid #000;padding-bottom:1mm}
.bank{font-weight:bold;font-size:13pt;padding-right:3mm;white-space:nowrap}
.bank-code{font-weight:bold;font-size:16pt;border-left:2px solid #000;border-right:2px solid #000;padding:0 3mm;white-space:nowrap}
.line{flex:1 0 auto;text-align:right;font-weight:bold;font-size:12.5pt;font-family:"Courier New",Courier,monospace;white-space:nowrap}
table{width:100%;border-collapse:collapse;table-layout:auto}
td{border:1px solid #000;border-top:0;padding:.6mm 1.5mm;vertical-align:top}
td.wide{width:75%}
.label{display:block;font-size:6.5pt;color:#333}
.value{display:block;min-height:1.2em;font-size:9.5pt}
.right .value{text-align:right}
.strong .value{font-weight:bold}
.instructions .value{min-height:18mm}
.payer .value{min-height:12mm}
.auth{text-align:right}
.cut{margin:5mm 0;border-top:1px dashed #000;font-size:7pt;text-align:right;padding-top:.5mm}
.barcode-row{display:flex;justify-content:space-between;align-items:flex-start;margin-top:3mm}
.barcode{display:block;flex:none}
.stamp{position:absolute;top:24mm;right:16mm;transform:rotate(-12deg);border:4px solid;border-radius:6px;padding:1mm 5mm;text-align:center;background:rgba(255,255,255,.85);z-index:1}
.stamp.ok{color:#146c34}
.stamp.bad{color:#a1261f}
.stamp-text{display:block;font-size:30pt;font-weight:bold;letter-spacing:.1em;text-transform:uppercase}
.stamp small{display:block;font-size:9pt}
.waiting{padding:10mm 0;text-align:center}
.waiting h1{font-size:18pt;margin:0 0 4mm}
.pix{margin-top:6mm;border:1px solid #000;padding:3mm;page-break-inside:avoid;break-inside:avoid}
.pix h2{font-size:11pt;margin:0 0 2mm}
.pix-body{display:flex;gap:4mm;align-items:flex-start}
.pix img{width:45mm;height:45mm;flex:none;image-rendering:pixelated}
.pix-copy{flex:1}
.pix label{display:block;font-size:8pt;font-weight:bold;margin-bottom:1mm}
.pix textarea{width:100%;font:8pt "Courier New",Courier,monospace;resize:vertical;word-break:break-all}
/* Phones: the same fields, stacked; the line breaks only between its groups, the barcode scales. */
@media screen and (max-width:680px){
.sheet{margin:0;padding:12px;box-shadow:none}
.slip-head{align-items:center}
.line{flex:1 1 100%;white-space:normal;text-align:left;font-size:11pt;word-spacing:.2em}
table,tbody,tr,td{display:block;width:auto!important}
td{border:1px solid #000;border-top:0}
tr:first-child td:first-child{border-top:1px solid #000}
.instructions .value{min-height:0}
td:has(> .value:empty){display:none}
.barcode-row{flex-direction:column;gap:2mm}
.barcode{max-width:100%}
.pix-body{flex-wrap:wrap}
.stamp{top:12px;right:12px}
}
@media print{
body{background:#fff}
.sheet{margin:0;padding:0;width:auto;box-shadow:none}
.noprint{display:none}
.stamp{top:16mm}
}
${PAYER_ACTIONS_CSS}`;
