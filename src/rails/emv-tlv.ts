/** EMV QRCPS data objects: 2-digit id, 2-digit decimal length, value. */

export class TlvFormatError extends Error {
  override name = 'TlvFormatError';
}

export function encodeTlv(id: string, value: string): string {
  if (!/^\d{2}$/.test(id)) throw new RangeError(`EMV id must be 2 digits, got "${id}"`);
  if (value.length === 0 || value.length > 99) {
    throw new RangeError(`EMV field ${id} must hold 1-99 characters, got ${value.length}`);
  }
  return id + String(value.length).padStart(2, '0') + value;
}

/** Ids in the order they appear; a repeated id is malformed because readers would disagree on which one wins. */
export function parseTlv(data: string): Map<string, string> {
  const fields = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const id = data.slice(at, at + 2);
    const lengthText = data.slice(at + 2, at + 4);
    if (!/^\d{2}$/.test(id) || !/^\d{2}$/.test(lengthText)) {
      throw new TlvFormatError(`bad id/length at offset ${at}`);
    }
    const length = Number(lengthText);
    const value = data.slice(at + 4, at + 4 + length);
    if (length === 0 || value.length !== length) throw new TlvFormatError(`field ${id} at offset ${at} is truncated`);
    if (fields.has(id)) throw new TlvFormatError(`field ${id} appears twice`);
    fields.set(id, value);
    at += 4 + length;
  }
  return fields;
}
