import dns, { type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Config } from '../config.js';

/**
 * The one outbound guard (DESIGN §21): every request Kosh makes to a URL a tenant influenced (today
 * the webhook endpoints; third parties' base URLs come from the deployment's configuration only)
 * is checked here. http(s) only (https only in live mode); no private, loopback, link-local,
 * CGNAT, multicast, reserved, unspecified or cloud-metadata address, however it is spelled.
 * Checked when the URL is saved and again before every request, and the socket's own DNS lookup
 * (`outboundLookup`) refuses the same addresses, so the address connected to is the address
 * checked (DNS rebinding). Redirects are never followed by the callers (node:http does not).
 *
 * Integer, octal and hex IPv4 spellings (`2130706433`, `0177.0.0.1`, `0x7f.1`) need no parsing
 * here: the WHATWG URL parser already turns them into dotted quads (tested).
 *
 * `KOSH_OUTBOUND_ALLOW_PRIVATE=1` (test-mode deployments only; decision 0210) lifts the address
 * rule so tests and developers can deliver to receivers on loopback.
 */
export type OutboundPolicy = {
  /** Only https (live mode). */
  httpsOnly: boolean;
  /** Private and loopback addresses allowed (KOSH_OUTBOUND_ALLOW_PRIVATE in a test deployment). */
  allowPrivate: boolean;
};

export function outboundPolicy(config: Pick<Config, 'mode' | 'outboundAllowPrivate'>): OutboundPolicy {
  return { httpsOnly: config.mode === 'live', allowPrivate: config.mode !== 'live' && config.outboundAllowPrivate };
}

const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT (also Alibaba's metadata 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, incl. the metadata service 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. broadcast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback (::1) and the deprecated IPv4-compatible range
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID…)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, incl. AWS's metadata fd00:ec2::254
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (zone id removed), or null if it is not one. */
function ipv6Bytes(address: string): number[] | null {
  let text = address.split('%')[0]!;
  if (isIP(text) !== 6) return null;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...dotted[1]!.split('.').map(Number));
    text = text.slice(0, -dotted[1]!.length) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string) => (part ? part.split(':').filter((g) => g !== '') : []);
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const zeros = Array(8 - left.length - right.length).fill('0');
  const all = [...left, ...(rest === undefined ? [] : zeros), ...right].map((g) => parseInt(g, 16));
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/**
 * IPv4 addresses carried inside IPv6 ones are judged as IPv4: IPv4-mapped (::ffff:0:0/96),
 * IPv4-translated (::ffff:0:0:0/96, RFC 2765), IPv4-compatible (::/96), NAT64 (64:ff9b::/96) and
 * 6to4 (2002::/16). `[::ffff:0:7f00:1]` is 127.0.0.1 to a stack that unwraps it.
 */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  if (!b) return null;
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12).join('.');
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return b.slice(12).join('.');
  if (zeros(0, 12)) return b.slice(12).join('.');
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0)) return b.slice(12).join('.');
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.');
  return null;
}

export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const family = isIP(bare);
  if (family === 4) return forbidden.check(bare, 'ipv4');
  if (family === 6) {
    if (forbidden.check(bare, 'ipv6')) return true;
    const inner = embeddedIpv4(bare);
    return inner !== null && forbidden.check(inner, 'ipv4');
  }
  return true; // not an IP address at all: refuse rather than guess
}

const DNS_TIMEOUT_MS = 5_000;

async function resolveAll(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS lookup timed out')), DNS_TIMEOUT_MS);
  });
  try {
    const answers = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    return answers.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why `url` may not be called under `policy`, or null when it may. Every address the host resolves
 * to must be public: one private answer is enough to refuse.
 */
export async function outboundUrlProblem(url: URL, policy: OutboundPolicy): Promise<string | null> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (policy.httpsOnly && url.protocol !== 'https:') return 'must use https in live mode';
  if (policy.allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    return isForbiddenAddress(host) ? `${host} is a private, loopback, link-local or reserved address` : null;
  }
  let addresses: string[];
  try {
    addresses = await resolveAll(host);
  } catch (error) {
    return `host ${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (addresses.length === 0) return `host ${host} could not be resolved`;
  const bad = addresses.find(isForbiddenAddress);
  return bad ? `host ${host} resolves to ${bad}, a private, loopback, link-local or reserved address` : null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The DNS lookup given to the socket itself: the addresses the connection is made to are the ones
 * checked, so a name that answers publicly to the pre-request check and privately a moment later
 * (DNS rebinding) still cannot reach inside. One forbidden answer refuses the connection
 * (`EADDRFORBIDDEN`). A literal IP host never reaches a lookup: `outboundUrlProblem` judges it.
 */
export function publicOnlyLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad || addresses.length === 0) {
      const refused: NodeJS.ErrnoException = new Error(
        `${hostname} resolves to ${bad?.address ?? 'nothing'}, a private, loopback, link-local or reserved address`,
      );
      refused.code = 'EADDRFORBIDDEN';
      return callback(refused, []);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/** The socket lookup for `policy`: the checking one, or the system's when private addresses are allowed. */
export function outboundLookup(policy: OutboundPolicy): typeof publicOnlyLookup | undefined {
  return policy.allowPrivate ? undefined : publicOnlyLookup;
}
