/**
 * Hosts for the multi-host suite: Linux network namespaces joined to a bridge of their own by
 * veth links, made with `ip` by the test (root with CAP_SYS_ADMIN). A host reaches only the
 * bridge address, where the test forwards the ports it names (Postgres, Redis) to loopback; it
 * has no default route, so nothing else on any network is reachable from it. The git remotes
 * are bare repositories on the shared file system. `partition(host)` sets the host's link down
 * (its packets are dropped, its connections hang, as when a cable is pulled); `heal` sets it up.
 * `destroy()` removes every namespace, link and forwarder, whatever state the test left.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { promisify } from "node:util";

const run = promisify(execFile);

async function ip(...args: string[]): Promise<void> {
  await run("ip", args, { timeout: 10_000 });
}

/** Why this machine cannot make network namespaces, or null when it can. */
export async function netnsUnavailable(): Promise<string | null> {
  if (process.getuid?.() !== 0) return "not root";
  const probe = `ovprobe-${randomBytes(3).toString("hex")}`;
  try {
    await ip("netns", "add", probe);
  } catch (error) {
    return `ip netns add fails here (${(error as Error).message.split("\n")[0]})`;
  }
  await ip("netns", "del", probe).catch(() => undefined);
  return null;
}

export interface NetHost {
  name: string;
  /** The namespace (`ip netns exec NS …`). */
  ns: string;
  address: string;
  /** The link's end on the bridge side, set down to partition the host. */
  link: string;
}

export class NetHosts {
  readonly tag = randomBytes(2).toString("hex");
  /** 10.<201–250>.<0–255>.1: the bridge, where forwarded ports listen. */
  readonly gateway: string;
  private readonly subnet: string;
  private readonly bridge: string;
  private readonly hosts: NetHost[] = [];
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private made = false;

  constructor() {
    const bytes = randomBytes(2);
    this.subnet = `10.${201 + ((bytes[0] as number) % 50)}.${bytes[1]}`;
    this.gateway = `${this.subnet}.1`;
    this.bridge = `ovbr${this.tag}`;
  }

  async setup(): Promise<this> {
    this.made = true;
    await ip("link", "add", this.bridge, "type", "bridge");
    await ip("addr", "add", `${this.gateway}/24`, "dev", this.bridge);
    await ip("link", "set", this.bridge, "up");
    return this;
  }

  /** A new host: its namespace, and a veth link from it to the bridge. */
  async addHost(name: string): Promise<NetHost> {
    const index = this.hosts.length + 2;
    const host: NetHost = {
      name,
      ns: `ov-${this.tag}-${name}`,
      address: `${this.subnet}.${index}`,
      link: `ov${this.tag}h${index}`,
    };
    const inner = `ov${this.tag}n${index}`;
    await ip("netns", "add", host.ns);
    this.hosts.push(host);
    await ip("link", "add", host.link, "type", "veth", "peer", "name", inner);
    await ip("link", "set", inner, "netns", host.ns);
    await ip("link", "set", host.link, "master", this.bridge);
    await ip("link", "set", host.link, "up");
    await ip("-n", host.ns, "addr", "add", `${host.address}/24`, "dev", inner);
    await ip("-n", host.ns, "link", "set", inner, "up");
    await ip("-n", host.ns, "link", "set", "lo", "up");
    return host;
  }

  /**
   * Forwards `gateway:<returned port>` to `127.0.0.1:port` (a service of the machine, as another
   * host would see it on the network). Each accepted connection opens one to the target; a
   * closed or failed side closes the other. No retries.
   */
  async forward(port: number): Promise<number> {
    const server = createServer((inbound) => {
      const outbound = createConnection({ host: "127.0.0.1", port });
      for (const s of [inbound, outbound]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, this.gateway, () => resolve());
    });
    const address = server.address();
    if (typeof address !== "object" || address === null) throw new Error("forwarder has no port");
    return address.port;
  }

  /** Pulls the host's cable: its link goes down, its packets are dropped. */
  async partition(host: NetHost): Promise<void> {
    await ip("link", "set", host.link, "down");
  }

  async heal(host: NetHost): Promise<void> {
    await ip("link", "set", host.link, "up");
  }

  /** `file argv…` run inside the host's namespace (`ip netns exec`, which execs it). */
  command(host: NetHost, file: string, argv: string[]): { file: string; argv: string[] } {
    return { file: "ip", argv: ["netns", "exec", host.ns, file, ...argv] };
  }

  async destroy(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    for (const server of this.servers.splice(0)) await new Promise((r) => server.close(r));
    for (const host of this.hosts.splice(0)) {
      await ip("link", "del", host.link).catch(() => undefined);
      await ip("netns", "del", host.ns).catch(() => undefined);
    }
    if (this.made) await ip("link", "del", this.bridge).catch(() => undefined);
    this.made = false;
  }
}
