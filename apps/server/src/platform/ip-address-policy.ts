// Which IP addresses an outbound request from Herald may reach
// (docs/security.md, "Outbound requests (SSRF)"). Only globally routable
// unicast space is public; every special-purpose block of the IANA IPv4 and
// IPv6 Special-Purpose Address Registries (RFC 6890 and its updates) is
// refused. IPv6 forms that
// carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the
// IPv4 address they carry, so `::ffff:127.0.0.1` is loopback.
import net from 'node:net';

/** Why an address is refused; `null` from {@link classifyAddress} means public. */
export type AddressBlock =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared' // CGNAT, RFC 6598
  | 'link-local'
  | 'unique-local'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'invalid';

/** The blocks a user would call "a private network"; the rest are "reserved". */
export const PRIVATE_NETWORK_BLOCKS: ReadonlySet<AddressBlock> = new Set(['loopback', 'private', 'shared', 'link-local', 'unique-local']);

interface Ipv4Range {
  base: number;
  prefix: number;
  block: AddressBlock;
}

const ipv4Ranges: Ipv4Range[] = [
  ['0.0.0.0', 8, 'unspecified'], // "this network", RFC 791
  ['10.0.0.0', 8, 'private'], // RFC 1918
  ['100.64.0.0', 10, 'shared'], // CGNAT, RFC 6598
  ['127.0.0.0', 8, 'loopback'], // RFC 1122
  ['169.254.0.0', 16, 'link-local'], // RFC 3927 (cloud metadata lives at 169.254.169.254)
  ['172.16.0.0', 12, 'private'], // RFC 1918
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments, RFC 6890
  ['192.0.2.0', 24, 'documentation'], // TEST-NET-1, RFC 5737
  ['192.31.196.0', 24, 'reserved'], // AS112-v4, RFC 7535
  ['192.52.193.0', 24, 'reserved'], // AMT, RFC 7450
  ['192.88.99.0', 24, 'reserved'], // 6to4 relay anycast, RFC 7526
  ['192.168.0.0', 16, 'private'], // RFC 1918
  ['192.175.48.0', 24, 'reserved'], // direct delegation AS112, RFC 7534
  ['198.18.0.0', 15, 'benchmarking'], // RFC 2544
  ['198.51.100.0', 24, 'documentation'], // TEST-NET-2, RFC 5737
  ['203.0.113.0', 24, 'documentation'], // TEST-NET-3, RFC 5737
  ['224.0.0.0', 4, 'multicast'], // RFC 5771
  ['255.255.255.255', 32, 'broadcast'], // RFC 919 (checked before 240/4 below)
  ['240.0.0.0', 4, 'reserved'], // RFC 1112
].map(([address, prefix, block]) => ({ base: ipv4ToNumber(address as string), prefix: prefix as number, block: block as AddressBlock }));

function ipv4ToNumber(address: string): number {
  const parts = address.split('.').map(Number);
  return (((parts[0] ?? 0) << 24) | ((parts[1] ?? 0) << 16) | ((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >>> 0;
}

function classifyIpv4(address: string): AddressBlock | null {
  const value = ipv4ToNumber(address);
  for (const range of ipv4Ranges) {
    const mask = range.prefix === 0 ? 0 : (0xffffffff << (32 - range.prefix)) >>> 0;
    if ((value & mask) >>> 0 === (range.base & mask) >>> 0) return range.block;
  }
  return null;
}

/** Expands a textual IPv6 address (any valid form, with or without a trailing dotted quad) to 8 groups. */
function ipv6ToGroups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  // A trailing dotted quad (`::ffff:127.0.0.1`) becomes two hex groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad?.[1]) {
    if (net.isIPv4(quad[1]) === false) return null;
    const v = ipv4ToNumber(quad[1]);
    text = `${text.slice(0, quad.index)}${(v >>> 16).toString(16)}:${(v & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  return groups.some(Number.isNaN) ? null : groups;
}

function groupsToIpv4(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

function classifyIpv6(address: string): AddressBlock | null {
  const g = ipv6ToGroups(address);
  if (!g) return 'invalid';
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0) {
    if (g6 === 0 && g7 === 0) return 'unspecified'; // ::
    if (g6 === 0 && g7 === 1) return 'loopback'; // ::1
    return classifyIpv4(groupsToIpv4(g6, g7)) ?? 'reserved'; // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291 §2.5.5.1)
  }
  if (firstFiveZero && g5 === 0xffff) return classifyIpv4(groupsToIpv4(g6, g7)); // IPv4-mapped ::ffff:a.b.c.d
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return classifyIpv4(groupsToIpv4(g6, g7)); // IPv4-translated ::ffff:0:a.b.c.d, RFC 2765
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIpv4(groupsToIpv4(g6, g7)); // NAT64 well-known prefix, RFC 6052
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // local-use NAT64, RFC 8215
  if (g0 === 0x2002) return classifyIpv4(groupsToIpv4(g1, g2)); // 6to4, RFC 3056: judged by the IPv4 address it tunnels to
  if (g0 >= 0xff00) return 'multicast'; // ff00::/8
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local'; // fc00::/7, RFC 4193
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // site-local fec0::/10 (deprecated, RFC 3879)
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation'; // 2001:db8::/32, RFC 3849
  if (g0 === 0x3fff && g1 < 0x1000) return 'documentation'; // 3fff::/20, RFC 9637
  if (g0 === 0x2001 && g1 === 0x0002 && g2 === 0) return 'benchmarking'; // 2001:2::/48, RFC 5180
  if (g0 === 0x2001 && g1 < 0x0200) return 'reserved'; // 2001::/23 IETF protocol assignments (Teredo, ORCHID…)
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // discard-only 100::/64, RFC 6666
  if ((g0 & 0xe000) !== 0x2000) return 'reserved'; // outside global unicast 2000::/3
  return null;
}

/**
 * Classifies an IP address given as text (IPv4 dotted quad or any IPv6 form).
 * Returns `null` when the address is public unicast, otherwise the block it
 * belongs to; text that is not an IP address is `'invalid'`.
 */
export function classifyAddress(address: string): AddressBlock | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = net.isIP(bare);
  if (family === 4) return classifyIpv4(bare);
  if (family === 6) return classifyIpv6(bare);
  return 'invalid';
}
