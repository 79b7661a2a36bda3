/**
 * Interleaved 2 of 5, the symbology FEBRABAN fixes for the boleto barcode. Each digit is five
 * elements, two of them wide; digits go in pairs, the first drawn in the bars and the second in the
 * spaces between them.
 */

const DIGIT_PATTERNS: readonly string[] = [
  'nnwwn', // 0
  'wnnnw', // 1
  'nwnnw', // 2
  'wwnnn', // 3
  'nnwnw', // 4
  'wnwnn', // 5
  'nwwnn', // 6
  'nnnww', // 7
  'wnnwn', // 8
  'nwnwn', // 9
];

/** FEBRABAN asks for a 1:3 ratio; readers accept 2.25-3, and 3 survives smudged printing best. */
export const WIDE_MODULES = 3;
const START = 'nnnn';
const STOP = 'wnn';

/** Elements alternate bar, space, bar…, starting and ending with a bar. */
function elements(digits: string): string {
  if (!/^\d*$/.test(digits) || digits.length % 2 !== 0) {
    throw new RangeError('Interleaved 2 of 5 encodes an even number of digits');
  }
  let out = START;
  for (let i = 0; i < digits.length; i += 2) {
    const bars = DIGIT_PATTERNS[Number(digits[i])] ?? '';
    const spaces = DIGIT_PATTERNS[Number(digits[i + 1])] ?? '';
    for (let k = 0; k < 5; k++) out += `${bars[k]}${spaces[k]}`;
  }
  return out + STOP;
}

/** One entry per module (narrow element width), true where ink goes; quiet zones are the caller's. */
export function itf25Bars(digits: string): boolean[] {
  const modules: boolean[] = [];
  for (const [i, element] of [...elements(digits)].entries()) {
    const width = element === 'w' ? WIDE_MODULES : 1;
    for (let m = 0; m < width; m++) modules.push(i % 2 === 0);
  }
  return modules;
}

export interface ItfSvgOptions {
  /** Physical width of one module; FEBRABAN's narrow bar is 0.25 mm. */
  moduleMm?: number;
  /** FEBRABAN: at least 13 mm tall. */
  heightMm?: number;
  /** Blank modules each side; readers need ten narrow widths or more. */
  quietModules?: number;
}

/**
 * Runs of ink become one rect each, in module units, so the drawing scales without resampling and a
 * reader (or a test) can recover the element widths exactly from x and width.
 */
export function itf25Svg(digits: string, options: ItfSvgOptions = {}): string {
  const { moduleMm = 0.25, heightMm = 13, quietModules = 10 } = options;
  const modules = itf25Bars(digits);
  const total = modules.length + 2 * quietModules;
  const rects: string[] = [];
  let i = 0;
  while (i < modules.length) {
    if (!modules[i]) {
      i++;
      continue;
    }
    let end = i;
    while (end < modules.length && modules[end]) end++;
    rects.push(`<rect x="${i + quietModules}" y="0" width="${end - i}" height="1"/>`);
    i = end;
  }
  // Numbers only: nothing from the caller reaches this markup except digits already validated above.
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="barcode" role="img" aria-label="Código de barras ${digits}" ` +
    `width="${(total * moduleMm).toFixed(2)}mm" height="${heightMm}mm" viewBox="0 0 ${total} 1" ` +
    `preserveAspectRatio="none" shape-rendering="crispEdges" data-modules="${modules.length}" data-quiet="${quietModules}">` +
    `<rect x="0" y="0" width="${total}" height="1" fill="#fff"/><g fill="#000">${rects.join('')}</g></svg>`
  );
}
