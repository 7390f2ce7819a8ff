import { lookup } from "node:dns/promises";
import { type Cidr, EGRESS_DEFAULTS } from "@overseer/run-contract";
import { isForbiddenAddress } from "./forbidden-address.ts";

export interface EgressDecision {
  allowed: boolean;
  method: "CONNECT" | "HTTP";
  host: string;
  port: number;
  /** The address connected to (allowed decisions only). */
  address?: string;
  /** Why, in one line (shown to the client on 403 as well). */
  reason: string;
}

export interface EgressProxyOptions {
  /** Unix socket path to listen on (created by `start`, removed by `close`). */
  socketPath: string;
  /** Host rules allowed (`host`, `host:port`, `*.domain`; see the run contract's egress-host-rule.ts). */
  allowHosts: readonly string[];
  /** Destination ports allowed for rules without a port. Default `[443, 80]`. */
  allowPorts?: readonly number[];
  /**
   * Internal ranges the operator opted in to (a model gateway on 10.x, Ollama on the host):
   * resolved addresses inside them are not refused. Empty by default: nothing internal.
   */
  allowPrivateCidrs?: readonly Cidr[];
  /** Name → addresses. Default: the system resolver (`dns.lookup`, all addresses). */
  resolve?: (host: string) => Promise<string[]>;
  /** Address check applied to every resolved address. Default: `isForbiddenAddress` (production rule). */
  isForbiddenAddress?: (address: string) => boolean;
  /** Upper bound on establishing the upstream TCP connection. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /**
   * A tunnel or forwarded request whose upstream connection carried no byte either way for this
   * long is closed on both sides (a streamed response may pause for anything shorter). Default
   * 300 000 ms.
   */
  idleTimeoutMs?: number;
  /** Simultaneous client connections accepted; more are refused. Default 256. */
  maxConnections?: number;
  /** Called for every allow/deny decision (the worker logs these into the run log). */
  onDecision?: (decision: EgressDecision) => void;
}

/** Internal ranges allowed unless the operator opts in: none. */
const NO_CIDRS: readonly Cidr[] = Object.freeze([]);

/** Every option after defaults: what `EgressProxy` accepts. */
export type ResolvedEgressProxyOptions = Readonly<Required<EgressProxyOptions>>;

/** Merges options over `EGRESS_DEFAULTS` (`@overseer/run-contract`) once, and checks them right after (key, rule, value received). */
export function resolveEgressProxyOptions(options: EgressProxyOptions): ResolvedEgressProxyOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved: ResolvedEgressProxyOptions = Object.freeze({
    ...EGRESS_DEFAULTS,
    allowPrivateCidrs: NO_CIDRS,
    resolve: systemResolve,
    isForbiddenAddress,
    onDecision: () => undefined,
    ...(defined as EgressProxyOptions),
  });
  for (const key of ["connectTimeoutMs", "idleTimeoutMs", "maxConnections"] as const) {
    const value = resolved[key];
    if (!Number.isInteger(value) || value <= 0)
      throw new RangeError(`${key} must be an integer greater than 0, received ${String(value)}`);
  }
  if (resolved.allowPorts.length === 0)
    throw new RangeError("allowPorts must list at least one port, received []");
  return resolved;
}

async function systemResolve(host: string): Promise<string[]> {
  const results = await lookup(host, { all: true, verbatim: true });
  return results.map((r) => r.address);
}
