/** The CRC of each byte value, so that a byte costs one lookup instead of eight shifts. */
const TABLE = Uint16Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/**
 * CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0), as 4 upper-case hex digits.
 * Computed over UTF-8 bytes because that is what QR readers hash; BR Codes we build are ASCII,
 * whose UTF-8 bytes are their character codes, so those are read from the string directly.
 */
export function crc16CcittFalse(input: string): string {
  let crc = 0xffff;
  const step = (byte: number): void => {
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  };
  if (/^[\x00-\x7f]*$/.test(input)) for (let i = 0; i < input.length; i++) step(input.charCodeAt(i));
  else for (const byte of Buffer.from(input, 'utf8')) step(byte);
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
