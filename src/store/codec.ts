import { crc32 } from 'node:zlib';
import { isRecord } from './state.js';
import { RawRecord, type Op, type Record, type StoredOp, type UnitHeader } from './types.js';

const TAB = 0x09;
const NEWLINE = 0x0a;
const CRC_HEX_LENGTH = 8;

/** A journal line: `<crc32 hex of json>\t<json>\n`, json = opJson(collection, id, value). */
export function encodeOp(collection: string, id: string, value: Record | null): string {
  const json = opJson(collection, id, value);
  return `${crc32(json).toString(16).padStart(CRC_HEX_LENGTH, '0')}\t${json}\n`;
}

/**
 * The line that opens a unit of work of `ops` changes: the next `ops` lines belong to it, and
 * replay applies them only once all are there and intact (src/store/segments.ts). A unit of one
 * change needs no header: a line is checked whole by its CRC already.
 */
export function unitHeaderJson(ops: number): string {
  return `{"unit":${ops}}`;
}

/** What a journal line says: [collection, id, value-or-null]. */
export function opJson(collection: string, id: string, value: Record | null): string {
  return JSON.stringify([collection, id, value]);
}

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** Bytes a line adds to its JSON: the CRC's hex digits, the tab, the newline. */
const LINE_FRAME_BYTES = CRC_HEX_LENGTH + 2;

/**
 * The lines of `ops` (opJson texts), as encodeOp writes them one by one, written into `into`
 * (grown when too small, and returned). Each JSON is turned into UTF-8 once, straight into the
 * batch, and its CRC taken over those bytes: building each line as a string, then the batch as
 * one string, then its bytes, converted and copied every JSON three times.
 */
export function encodeLines(ops: readonly string[], into: Buffer): { bytes: Buffer; buffer: Buffer } {
  let most = 0;
  for (const json of ops) most += json.length * 3 + LINE_FRAME_BYTES;
  let buffer = into;
  if (buffer.length < most) buffer = Buffer.allocUnsafe(Math.max(most, buffer.length * 2));
  let at = 0;
  for (const json of ops) {
    const start = at + CRC_HEX_LENGTH + 1;
    const end = start + buffer.write(json, start, 'utf8');
    let crc = crc32(buffer.subarray(start, end));
    for (let digit = CRC_HEX_LENGTH - 1; digit >= 0; digit--, crc >>>= 4) buffer[at + digit] = HEX_DIGITS[crc & 0xf]!;
    buffer[at + CRC_HEX_LENGTH] = TAB;
    buffer[end] = NEWLINE;
    at = end + 1;
  }
  return { bytes: buffer.subarray(0, at), buffer };
}

/** Decodes one line without its newline; undefined means torn or corrupt. */
export function decodeLine(line: Buffer): Op | undefined {
  const json = signedJson(line);
  return json === undefined ? undefined : parseOp(json);
}

/**
 * decodeLine for replay (start-up, compaction): a put whose value starts with its own id,
 * `{"id":"<id>",…` as every record the store writes does, keeps the value as its bytes
 * (RawRecord), parsed only if someone reads the record. Compaction copies such a value to the
 * snapshot as it is, and used to parse and re-serialize every record of the journal, most of
 * a compaction's CPU. The CRC has vouched for the bytes: they are the JSON encodeOp wrote.
 */
export function decodeStoredLine(line: Buffer): StoredOp | UnitHeader | undefined {
  const json = signedJson(line);
  if (json === undefined) return undefined;
  if (json[0] === OPEN_BRACE) return unitHeader(json);
  return rawPut(json) ?? parseOp(json);
}

const UNIT_PREFIX = Buffer.from('{"unit":');

/** `{"unit":N}` with N a whole number ≥ 2, or undefined (then the line is corrupt). */
function unitHeader(json: Buffer): UnitHeader | undefined {
  if (json.length <= UNIT_PREFIX.length + 1 || json[json.length - 1] !== CLOSE_BRACE) return undefined;
  for (let i = 0; i < UNIT_PREFIX.length; i++) if (json[i] !== UNIT_PREFIX[i]) return undefined;
  const digits = json.toString('latin1', UNIT_PREFIX.length, json.length - 1);
  if (!/^[1-9]\d{0,8}$/.test(digits)) return undefined;
  const ops = Number(digits);
  return ops >= 2 ? { unit: ops } : undefined;
}

/** The line's JSON when its CRC is eight lowercase hex digits that match it. */
function signedJson(line: Buffer): Buffer | undefined {
  if (line.length <= CRC_HEX_LENGTH + 1 || line[CRC_HEX_LENGTH] !== TAB) return undefined;
  // Read from the bytes: a string, a regex test and parseInt per line were a tenth of a replay.
  let crc = 0;
  for (let i = 0; i < CRC_HEX_LENGTH; i++) {
    const digit = HEX_VALUE[line[i]!]!;
    if (digit === NOT_HEX) return undefined;
    crc = crc * 16 + digit;
  }
  const json = line.subarray(CRC_HEX_LENGTH + 1);
  if (crc32(json) !== crc) return undefined;
  return json;
}

const NOT_HEX = 0xff;
/** The value of each byte as a lowercase hex digit, or NOT_HEX. */
const HEX_VALUE = new Uint8Array(256).fill(NOT_HEX);
for (let digit = 0; digit < 16; digit++) HEX_VALUE[HEX_DIGITS[digit]!] = digit;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACE = 0x7b;
const ID_KEY = Buffer.from('{"id":');

/** `["<collection>","<id>",{"id":"<id>"…}]` with no escapes in either string, or undefined (then it is parsed). */
function rawPut(json: Buffer): StoredOp | undefined {
  if (json[0] !== OPEN_BRACKET || json[json.length - 1] !== CLOSE_BRACKET) return undefined;
  const collectionEnd = plainStringEnd(json, 1);
  if (collectionEnd === undefined || json[collectionEnd + 1] !== COMMA) return undefined;
  const idStart = collectionEnd + 2;
  const idEnd = plainStringEnd(json, idStart);
  if (idEnd === undefined || json[idEnd + 1] !== COMMA) return undefined;
  const valueStart = idEnd + 2;
  const valueEnd = json.length - 1;
  // The value's first member is its id, the same characters as the op's id: `{"id":"<id>"` then `,` or `}`.
  const idLength = idEnd + 1 - idStart;
  const idInValue = valueStart + ID_KEY.length;
  if (json[valueEnd - 1] !== CLOSE_BRACE || idInValue + idLength >= valueEnd) return undefined;
  for (let i = 0; i < ID_KEY.length; i++) if (json[valueStart + i] !== ID_KEY[i]) return undefined;
  for (let i = 0; i < idLength; i++) if (json[idInValue + i] !== json[idStart + i]) return undefined;
  const after = json[idInValue + idLength];
  if (after !== COMMA && after !== CLOSE_BRACE) return undefined;
  return {
    collection: json.toString('utf8', 2, collectionEnd),
    id: json.toString('utf8', idStart + 1, idEnd),
    value: new RawRecord(json, valueStart, valueEnd),
  };
}

/** Index of the closing quote of the JSON string opening at `start`, if it has no escape. */
function plainStringEnd(json: Buffer, start: number): number | undefined {
  if (json[start] !== QUOTE) return undefined;
  for (let i = start + 1; i < json.length; i++) {
    const byte = json[i];
    if (byte === BACKSLASH) return undefined;
    if (byte === QUOTE) return i;
  }
  return undefined;
}

function parseOp(json: Buffer): Op | undefined {
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
