import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** dns.lookup with `all: true`: the resolver the connect-time check asks (tests give a table). */
export type Resolve = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/** What the owner of a refused target can do: the attempt is not retried, so the delivery waits for a replay. */
const LISTENERS_WAY_OUT = 'to receive it where this sandbox cannot post, switch the account to listeners mode (payments-sandbox listen --take-over, or the console\'s Account view; docs/listening.md), then replay it';

/** Error code of a connection refused by the policy in its lookup, before the socket connects. */
export const TARGET_REFUSED = 'ESANDBOXTARGET';

const family = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/**
 * Never a webhook target, whatever SANDBOX_WEBHOOK_ALLOW says: link-local addresses, where
 * cloud providers serve instance metadata and credentials, and the metadata services that
 * live elsewhere.
 */
const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');
const METADATA = new BlockList();
// AWS's IPv6 instance metadata; Alibaba Cloud's metadata; Azure's WireServer (host agent).
METADATA.addAddress('fd00:ec2::254', 'ipv6');
METADATA.addAddress('100.100.100.200', 'ipv4');
METADATA.addAddress('168.63.129.16', 'ipv4');
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal', 'metadata.tencentyun.com']);

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** The eight 16-bit words of an IPv6 address (with `::` and a trailing dotted quad), or undefined. */
function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const words = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return words.length === 8 ? words : undefined;
}

/**
 * The IPv4 address an IPv6 address carries, where the network would deliver it to that IPv4
 * host: IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96,
 * deprecated but still routed by some stacks) and NAT64's well-known prefix (64:ff9b::/96).
 */
function carriedIpv4(address: string): string | undefined {
  const w = ipv6Words(address);
  if (!w) return undefined;
  const zero = (from: number, to: number): boolean => w.slice(from, to).every((x) => x === 0);
  const v4 = `${w[6]! >> 8}.${w[6]! & 0xff}.${w[7]! >> 8}.${w[7]! & 0xff}`;
  if (zero(0, 5) && w[5] === 0xffff) return v4;
  if (zero(0, 4) && w[4] === 0xffff && w[5] === 0) return v4;
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return v4;
  // ::/96 but :: and ::1, which are not IPv4 addresses.
  if (zero(0, 6) && (w[6] !== 0 || w[7]! > 1)) return v4;
  return undefined;
}

/** Why an address is never a target, or undefined. */
function forbiddenAddress(address: string): string | undefined {
  const carried = carriedIpv4(address);
  if (carried !== undefined) {
    const why = forbiddenAddress(carried);
    return why && `the IPv6 form of ${carried}, ${why}`;
  }
  if (LINK_LOCAL.check(address, family(address))) {
    return `a link-local address (${family(address) === 'ipv4' ? '169.254.0.0/16' : 'fe80::/10'}), where clouds serve instance metadata: the sandbox never posts to link-local or cloud-metadata addresses`;
  }
  if (METADATA.check(address, family(address))) return 'a cloud metadata address: the sandbox never posts to link-local or cloud-metadata addresses';
  return undefined;
}

/** The host of an http(s) URL as a bare name or IP (no brackets, no trailing dot, lowercase), or why it is not one. */
function hostOf(url: string): { host: string } | { error: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { error: 'must be an http(s) URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { error: `must be an http(s) URL, not ${parsed.protocol}` };
  const host = parsed.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  return host === '' ? { error: 'must be an http(s) URL with a host' } : { host };
}

/**
 * The webhook target policy (contract v3, Shared use): http(s) only; never link-local or
 * cloud-metadata addresses; and, when SANDBOX_WEBHOOK_ALLOW lists hosts and CIDRs, only
 * those. A URL is checked where it is given (its literal host) and again when its webhook
 * leaves: a literal address before any request, a name on each address it resolves to, in
 * the socket's lookup, before it connects.
 */
export class WebhookTargets {
  private constructor(
    private readonly entries: string[],
    private readonly any: boolean,
    private readonly names: Set<string>,
    /** `.example.com` for `*.example.com` */
    private readonly suffixes: string[],
    private readonly networks: BlockList | undefined,
  ) {}

  /** `*` (or nothing) allows any target but the forbidden ones; otherwise host names, `*.domains`, IPs and CIDRs. */
  static parse(allow: string | readonly string[] | undefined): WebhookTargets {
    const entries = typeof allow === 'string' ? allow.split(',').map((e) => e.trim()).filter((e) => e !== '') : [...(allow ?? [])].map((e) => e.trim());
    if (entries.length === 0 || (entries.length === 1 && entries[0] === '*')) return new WebhookTargets(['*'], true, new Set(), [], undefined);
    const names = new Set<string>();
    const suffixes: string[] = [];
    let networks: BlockList | undefined;
    for (const entry of entries) {
      const lower = entry.toLowerCase().replace(/\.$/, '');
      const [address, bits, ...rest] = lower.replace(/^\[|\](?=\/|$)/g, '').split('/');
      const prefix = bits === undefined ? undefined : Number(bits);
      if (address && isIP(address) !== 0 && rest.length === 0) {
        const max = isIP(address) === 4 ? 32 : 128;
        if (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max && /^\d+$/.test(bits ?? ''))) {
          throw new Error(`SANDBOX_WEBHOOK_ALLOW: "${entry}" has a prefix length outside 0-${max}`);
        }
        networks ??= new BlockList();
        if (prefix === undefined) networks.addAddress(address, family(address));
        else networks.addSubnet(address, prefix, family(address));
      } else if (lower.startsWith('*.') && HOST_NAME.test(lower.slice(2))) {
        suffixes.push(lower.slice(1));
      } else if (HOST_NAME.test(lower)) {
        names.add(lower);
      } else {
        throw new Error(`SANDBOX_WEBHOOK_ALLOW: "${entry}" is not a host name, *.domain, IP address or CIDR (or * for any)`);
      }
    }
    return new WebhookTargets(entries, false, names, suffixes, networks);
  }

  /** Whether any target is allowed (no SANDBOX_WEBHOOK_ALLOW list) but the forbidden ones. */
  allowsAny(): boolean {
    return this.any;
  }

  /** The setting as given, for messages. */
  describe(): string {
    return this.entries.join(', ');
  }

  private notListed(host: string): string {
    return `${host} is not among the webhook targets this sandbox allows (SANDBOX_WEBHOOK_ALLOW=${this.describe()})`;
  }

  private nameListed(name: string): boolean {
    return this.names.has(name) || this.suffixes.some((suffix) => name.endsWith(suffix));
  }

  /** Why an address (literal, or resolved from `name`) is refused, or undefined. */
  private addressRefusal(address: string, name?: string): string | undefined {
    const forbidden = forbiddenAddress(address);
    if (forbidden) return name === undefined ? `${address} is ${forbidden}` : `${name} resolves to ${address}, ${forbidden}`;
    if (this.any || (name !== undefined && this.nameListed(name))) return undefined;
    if (this.networks?.check(address, family(address))) return undefined;
    return this.notListed(name === undefined ? address : `${name} (${address})`);
  }

  /**
   * Why `url` is refused where it is given (a request's postbackUrl, the account's webhook
   * URL), or undefined. A name is refused here only when nothing could let it through: a
   * metadata name, or a list without CIDRs that does not name it.
   */
  refusal(url: string): string | undefined {
    const parsed = hostOf(url);
    if ('error' in parsed) return parsed.error;
    const { host } = parsed;
    if (isIP(host) !== 0) return this.addressRefusal(host);
    if (METADATA_NAMES.has(host)) return `${host} is a cloud metadata service: the sandbox never posts to link-local or cloud-metadata addresses`;
    if (this.any || this.nameListed(host) || this.networks !== undefined) return undefined;
    return this.notListed(host);
  }

  /** The message a refused delivery attempt records, with the way to receive it all the same. */
  static deliveryMessage(reason: string): string {
    return `refused by the webhook target policy: ${reason}; ${LISTENERS_WAY_OUT}`;
  }

  /**
   * The `lookup` of the webhook sockets: resolves the name, keeps only the addresses the
   * policy allows, and fails (code ESANDBOXTARGET) when none is left, so the socket never
   * connects. Literal addresses never reach a lookup; `post` checks them before.
   */
  lookup(resolve: Resolve = dnsLookup): LookupFunction {
    return (hostname, options, callback) => {
      const name = hostname.replace(/\.$/, '').toLowerCase();
      resolve(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, options.all ? [] : '');
        const refusals: string[] = [];
        const kept = addresses.filter((a) => {
          const refusal = this.addressRefusal(a.address, name);
          if (refusal) refusals.push(refusal);
          return refusal === undefined;
        });
        const first = kept[0];
        if (!first) {
          const reason = refusals[0] ?? `${name} resolves to no address`;
          return callback(Object.assign(new Error(WebhookTargets.deliveryMessage(reason)), { code: TARGET_REFUSED }), options.all ? [] : '');
        }
        if (options.all) callback(null, kept);
        else callback(null, first.address, first.family);
      });
    };
  }
}
