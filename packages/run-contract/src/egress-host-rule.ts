import { isIPv4, isIPv6 } from "node:net";
import { z } from "zod";

/**
 * One entry of a project's `network_allow_hosts`, parsed by ONE schema used everywhere the list
 * is read: `overseer init`, task/config import, the coordinator building a run job, and the
 * sandbox spec the egress proxy enforces. A list that `init` accepts is a list every run accepts.
 *
 * Forms:
 * - `host` — a DNS name or an IP literal (`[v6]` for IPv6); reachable on the default ports (443, 80);
 * - `host:port` — that host on that port only (`llm.corp.example:8443`, `[fd00::1]:11434`);
 * - `*.domain` / `*.domain:port` — every subdomain of `domain` (not `domain` itself).
 *
 * A rule only says which NAMES may be asked for. Where they resolve to is checked by the proxy:
 * loopback and private addresses stay refused unless the worker's operator opted in
 * (`OVERSEER_EGRESS_ALLOW_PRIVATE`).
 */

export const EGRESS_HOST_EXPECTED =
  "a host name or IP, optionally *.-prefixed and with :port (e.g. api.openai.com, llm.corp.example:8443, *.example.com, [fd00::1]:11434); no scheme, no path";

export interface EgressHostRule {
  /** Lower-case host (no trailing dot, IPv6 without brackets), without the `*.` prefix. */
  host: string;
  /** True for `*.domain`: matches strict subdomains of `host`. */
  wildcard: boolean;
  /** The one port allowed, or null for the default ports. */
  port: number | null;
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

function isDnsName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  return host.split(".").every((label) => LABEL.test(label));
}

/** Parses one entry; null when it is not of a form above. */
export function parseEgressHostRule(text: string): EgressHostRule | null {
  const raw = text.trim().toLowerCase();
  if (raw === "" || /[/\s@?#]/.test(raw)) return null;
  let rest = raw;
  let wildcard = false;
  if (rest.startsWith("*.")) {
    wildcard = true;
    rest = rest.slice(2);
  }
  let port: number | null = null;
  let host: string;
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]");
    if (close < 0) return null;
    host = rest.slice(1, close);
    const after = rest.slice(close + 1);
    if (after !== "") {
      if (!/^:\d{1,5}$/.test(after)) return null;
      port = Number(after.slice(1));
    }
    if (!isIPv6(host) || wildcard) return null;
  } else {
    const colon = rest.lastIndexOf(":");
    if (colon >= 0) {
      if (rest.indexOf(":") !== colon) return null; // bare IPv6 needs brackets when a port follows; see below
      const portText = rest.slice(colon + 1);
      if (!/^\d{1,5}$/.test(portText)) return null;
      port = Number(portText);
      host = rest.slice(0, colon);
    } else host = rest;
    if (host.endsWith(".")) host = host.slice(0, -1);
    if (!(isIPv4(host) && !wildcard) && !isDnsName(host)) return null;
    if (wildcard && (isIPv4(host) || !host.includes("."))) return null;
  }
  if (port !== null && (port < 1 || port > 65535)) return null;
  return { host, wildcard, port };
}

/** Bare IPv6 literals (`::1`, no port) are accepted too, for lists written before brackets were needed. */
function parseWithBareIPv6(text: string): EgressHostRule | null {
  const trimmed = text.trim().toLowerCase();
  if (isIPv6(trimmed)) return { host: trimmed, wildcard: false, port: null };
  return parseEgressHostRule(text);
}

/** The zod schema of one entry, used by the runner config and the sandbox spec alike. */
export const egressHostRuleSchema = z
  .string({ error: EGRESS_HOST_EXPECTED })
  .refine((value) => parseWithBareIPv6(value) !== null, { error: EGRESS_HOST_EXPECTED });

/** Parses a list that already passed {@link egressHostRuleSchema}. */
export function parseEgressHostRules(entries: readonly string[]): EgressHostRule[] {
  return entries.map((entry) => {
    const rule = parseWithBareIPv6(entry);
    if (rule === null)
      throw new Error(`invalid egress host rule ${JSON.stringify(entry)}: ${EGRESS_HOST_EXPECTED}`);
    return rule;
  });
}

/** Canonical text of a rule (what logs and `doctor` print). */
export function formatEgressHostRule(rule: EgressHostRule): string {
  const host = rule.host.includes(":") ? `[${rule.host}]` : rule.host;
  return `${rule.wildcard ? "*." : ""}${host}${rule.port === null ? "" : `:${rule.port}`}`;
}

/** True when `host:port` (host normalised) is allowed by `rule`; port-less rules allow `defaultPorts`. */
export function egressRuleMatches(
  rule: EgressHostRule,
  host: string,
  port: number,
  defaultPorts: readonly number[],
): boolean {
  const hostOk = rule.wildcard ? host.endsWith(`.${rule.host}`) : host === rule.host;
  if (!hostOk) return false;
  return rule.port === null ? defaultPorts.includes(port) : rule.port === port;
}

/** An IPv4 or IPv6 CIDR (`10.0.0.0/8`, `127.0.0.1/32`, `fd00::/8`) an operator opted in to. */
export interface Cidr {
  text: string;
  family: 4 | 6;
  base: bigint;
  bits: number;
}

function ipToBigInt(address: string, family: 4 | 6): bigint {
  if (family === 4) return address.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
  const [head = "", tail] = address.split("::");
  let groups = head === "" ? [] : head.split(":");
  let tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const last = (tailGroups.length > 0 ? tailGroups : groups).at(-1) ?? "";
  const v4 = last.includes(".") ? last : null;
  if (v4 !== null) {
    const n = Number(ipToBigInt(v4, 4));
    const parts = [(n >>> 16).toString(16), (n & 0xffff).toString(16)];
    if (tailGroups.length > 0) tailGroups = [...tailGroups.slice(0, -1), ...parts];
    else groups = [...groups.slice(0, -1), ...parts];
  }
  const fill = tail === undefined ? 0 : 8 - groups.length - tailGroups.length;
  return [...groups, ...Array(fill).fill("0"), ...tailGroups].reduce(
    (acc, group) => (acc << 16n) | BigInt(Number.parseInt(group, 16)),
    0n,
  );
}

/** Parses `addr/bits`; null when malformed. A bare address means a single host (/32, /128). */
export function parseCidr(text: string): Cidr | null {
  const [address = "", bitsText, extra] = text.trim().split("/");
  if (extra !== undefined) return null;
  const family = isIPv4(address) ? 4 : isIPv6(address) ? 6 : null;
  if (family === null) return null;
  const max = family === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : -1;
  if (bits < 0 || bits > max) return null;
  const shift = BigInt(max - bits);
  return { text: `${address}/${bits}`, family, base: (ipToBigInt(address, family) >> shift) << shift, bits };
}

/** True when `address` (an IP literal) lies in `cidr`. IPv4-mapped IPv6 addresses match IPv4 CIDRs. */
export function cidrContains(cidr: Cidr, address: string): boolean {
  let family: 4 | 6 | null = isIPv4(address) ? 4 : isIPv6(address) ? 6 : null;
  let value: bigint;
  if (family === null) return false;
  value = ipToBigInt(address, family);
  if (family === 6 && cidr.family === 4 && value >> 32n === 0xffffn) {
    family = 4;
    value &= 0xffffffffn;
  }
  if (family !== cidr.family) return false;
  const shift = BigInt((family === 4 ? 32 : 128) - cidr.bits);
  return value >> shift === cidr.base >> shift;
}
