import { isIPv4, isIPv6 } from "node:net";

/**
 * Addresses the egress proxy never connects to, whatever name led there: loopback (cluster
 * services such as Postgres and Redis listen there), private and CGNAT ranges (the cluster's own
 * network), link-local (cloud metadata endpoints such as 169.254.169.254), unique-local and
 * site-local IPv6, multicast, reserved and unspecified addresses, documentation/benchmark
 * ranges, and IPv6 forms that embed one of those IPv4 addresses (mapped, compatible, NAT64, 6to4).
 */

const IPV4_FORBIDDEN: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];

/** [prefix as 128-bit value, prefix length] */
const IPV6_FORBIDDEN: ReadonlyArray<readonly [string, number]> = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001::", 23], // IETF protocol assignments (Teredo included)
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
];

function ipv4ToNumber(address: string): number {
  return address.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inIPv4Range(value: number, base: string, bits: number): boolean {
  const size = 2 ** (32 - bits);
  const start = ipv4ToNumber(base);
  return value >= start && value < start + size;
}

function isForbiddenIPv4(address: string): boolean {
  const value = ipv4ToNumber(address);
  return IPV4_FORBIDDEN.some(([base, bits]) => inIPv4Range(value, base, bits));
}

/** Parses a textual IPv6 address (optionally with an embedded dotted IPv4 tail) into a 128-bit value. */
export function parseIPv6(address: string): bigint {
  let text = address;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = ipv4ToNumber(text.slice(lastColon + 1));
    tail = [Math.floor(v4 / 65536), v4 % 65536];
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const restGroups = rest === undefined || rest === "" ? [] : rest.split(":");
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array(rest === undefined ? 0 : missing).fill("0"), ...restGroups].map(
    (g) => Number.parseInt(g, 16),
  );
  if (tail.length === 2) groups.splice(6, 2, tail[0] as number, tail[1] as number);
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(group), 0n);
}

function ipv6Prefix(value: bigint, bits: number): bigint {
  return value >> BigInt(128 - bits);
}

function embeddedIPv4(value: bigint, shift: number): string {
  const v4 = Number((value >> BigInt(shift)) & 0xffffffffn);
  return [v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join(".");
}

function isForbiddenIPv6(address: string): boolean {
  // A zone index ("fe80::1%eth0") only makes sense for link-local and similar scoped addresses.
  if (address.includes("%")) return true;
  const value = parseIPv6(address);
  if (IPV6_FORBIDDEN.some(([base, bits]) => ipv6Prefix(value, bits) === ipv6Prefix(parseIPv6(base), bits))) {
    return true;
  }
  const top96 = value >> 32n;
  if (top96 === 0xffffn || top96 === 0n) return isForbiddenIPv4(embeddedIPv4(value, 0)); // mapped, compatible
  if (top96 === parseIPv6("64:ff9b::") >> 32n) return isForbiddenIPv4(embeddedIPv4(value, 0)); // NAT64
  if (value >> 112n === 0x2002n) return isForbiddenIPv4(embeddedIPv4(value, 80)); // 6to4
  return false;
}

/** True when the proxy must refuse to connect to `address` (an IPv4 or IPv6 literal). Non-IPs are refused. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return isForbiddenIPv4(bare);
  if (isIPv6(bare.split("%")[0] ?? "")) return isForbiddenIPv6(bare);
  return true;
}
