/**
 * The status asked for with Prism's convention, `Prefer: code=404` (RFC 7240 syntax: several
 * preferences separated by commas, parameters by semicolons). undefined when none is asked.
 */
export function preferredStatus(header: string | string[] | undefined): number | undefined {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  for (const preference of values.flatMap((v) => v.split(','))) {
    const [token] = preference.split(';');
    const match = /^\s*code\s*=\s*"?(\d{3})"?\s*$/i.exec(token ?? '');
    if (match?.[1]) return Number(match[1]);
  }
  return undefined;
}
