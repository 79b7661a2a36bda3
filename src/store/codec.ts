import { crc32 } from 'node:zlib';
import { isRecord } from './state.js';
import type { Op, Record } from './types.js';

const TAB = 0x09;
const CRC_HEX_LENGTH = 8;

/** `<crc32 hex of json>\t<json>\n`, json = [collection, id, value-or-null]. */
export function encodeOp(collection: string, id: string, value: Record | null): string {
  const json = JSON.stringify([collection, id, value]);
  return `${crc32(json).toString(16).padStart(CRC_HEX_LENGTH, '0')}\t${json}\n`;
}

/** Decodes one line without its newline; undefined means torn or corrupt. */
export function decodeLine(line: Buffer): Op | undefined {
  if (line.length <= CRC_HEX_LENGTH + 1 || line[CRC_HEX_LENGTH] !== TAB) return undefined;
  const hex = line.toString('latin1', 0, CRC_HEX_LENGTH);
  if (!/^[0-9a-f]{8}$/.test(hex)) return undefined;
  const json = line.subarray(CRC_HEX_LENGTH + 1);
  if (crc32(json) !== parseInt(hex, 16)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) return undefined;
  const [collection, id, value]: unknown[] = parsed;
  if (typeof collection !== 'string' || typeof id !== 'string') return undefined;
  if (value === null) return { collection, id, value: null };
  if (!isRecord(value) || value.id !== id) return undefined;
  return { collection, id, value };
}
