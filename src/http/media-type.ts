import { format as formatContentType, parse as parseContentType } from 'content-type';

/**
 * A Content-Type as the `content-type` package reads it, with what the pipeline asks of it.
 * The only module that uses that package: a request's is read once, by the edge
 * (src/http/request.ts), and every stage reads the answer it carries
 * (test/architecture/request-facts.test.ts keeps it so).
 */
export interface MediaType {
  /** The header as sent. */
  readonly header: string;
  /** `type/subtype`, lower case; undefined when the header is not a media type. */
  readonly type: string | undefined;
  /** The structured-syntax suffix of the subtype (RFC 6839: `json` of `application/a+b+json`), lower case. */
  readonly suffix: string | undefined;
  /** The charset parameter, lower case. */
  readonly charset: string | undefined;
  /** `application/json` or an `application/*+json` type. */
  readonly isJson: boolean;
  /** Any `multipart/*` type (what an upload streams; the request log never records one). */
  readonly isMultipart: boolean;
  /** `multipart/form-data`, the one multipart type an upload takes. */
  readonly isFormData: boolean;
}

/** `type/subtype`, each a token (RFC 9110 8.3.1), as the package lower-cases them. */
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/;

export function parseMediaType(header: string): MediaType {
  let type: string | undefined;
  let charset: string | undefined;
  try {
    const parsed = parseContentType(header);
    type = parsed.type;
    charset = parsed.parameters.charset?.toLowerCase();
  } catch {
    type = undefined;
  }
  // The package splits off the parameters without checking what precedes them (`foo`, `a/b c` come back as types).
  if (type === undefined || !MEDIA_TYPE.test(type)) return { header, type: undefined, suffix: undefined, charset: undefined, isJson: false, isMultipart: false, isFormData: false };
  const slash = type.indexOf('/');
  const topLevel = type.slice(0, slash);
  const subtype = type.slice(slash + 1);
  const plus = subtype.lastIndexOf('+');
  const suffix = plus === -1 ? undefined : subtype.slice(plus + 1);
  return {
    header,
    type,
    suffix,
    charset,
    isJson: topLevel === 'application' && (subtype === 'json' || suffix === 'json'),
    isMultipart: topLevel === 'multipart',
    isFormData: type === 'multipart/form-data',
  };
}

/** A media type with `charset=utf-8` (replacing any other charset); as it is when it is not a media type. */
export function withCharset(type: string): string {
  try {
    const parsed = parseContentType(type);
    return formatContentType({ type: parsed.type, parameters: { ...parsed.parameters, charset: 'utf-8' } });
  } catch {
    return type;
  }
}
