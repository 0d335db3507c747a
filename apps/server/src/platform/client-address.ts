import net from 'node:net';

// The client address is Fastify's `request.ip`: the socket's peer address, or,
// when TRUST_PROXY is set, the address our proxy appended to X-Forwarded-For
// (app.ts trusts exactly one hop). These helpers only normalise it.

/** `::ffff:203.0.113.5` (an IPv4 client on a dual-stack socket) becomes `203.0.113.5`; a zone id is dropped. */
export function normalizeAddress(address: string): string {
  const withoutZone = address.split('%')[0] ?? address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(withoutZone);
  if (mapped?.[1]) return mapped[1];
  return withoutZone.toLowerCase();
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  if (!net.isIPv6(address)) return undefined;
  let text = address;
  // An embedded dotted IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) becomes two groups.
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(tail !== undefined ? missing : 0).fill('0'), ...tailGroups];
  return groups.length === 8 ? groups.map((g) => parseInt(g, 16)) : undefined;
}

/**
 * The key a per-client rate limit counts under. An IPv6 subscriber usually
 * owns a whole /64 and can pick any address in it, so IPv6 clients are
 * counted per /64; IPv4 clients per address.
 */
export function rateLimitKeyOfAddress(address: string): string {
  const normalized = normalizeAddress(address);
  const groups = ipv6Groups(normalized);
  if (!groups) return normalized;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
