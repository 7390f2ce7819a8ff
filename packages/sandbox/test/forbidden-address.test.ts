import { describe, expect, it } from "vitest";
import { parseIPv6 } from "../src/forbidden-address.ts";
import { isForbiddenAddress } from "../src/index.ts";

describe("isForbiddenAddress", () => {
  it.each([
    "127.0.0.1",
    "127.255.255.254",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254", // cloud metadata
    "100.64.0.1", // CGNAT
    "100.127.255.255",
    "224.0.0.1",
    "255.255.255.255",
    "198.18.0.1",
    "::",
    "::1",
    "fc00::1",
    "fd12:3456:789a::1", // unique local
    "fe80::1",
    "fe80::1%eth0",
    "ff02::1",
    "::ffff:127.0.0.1", // IPv4-mapped loopback
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::127.0.0.1", // IPv4-compatible
    "64:ff9b::a00:1", // NAT64 of 10.0.0.1
    "2002:7f00:1::", // 6to4 of 127.0.0.1
    "2001::1", // Teredo
    "not-an-ip",
  ])("refuses %s", (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    "1.1.1.1",
    "8.8.8.8",
    "104.16.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "2606:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808", // NAT64 of 8.8.8.8
    "2002:808:808::1",
  ])("allows public %s", (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it("parses IPv6 forms consistently", () => {
    expect(parseIPv6("::1")).toBe(1n);
    expect(parseIPv6("::ffff:127.0.0.1")).toBe(parseIPv6("::ffff:7f00:1"));
    expect(parseIPv6("2001:db8:0:0:0:0:0:1")).toBe(parseIPv6("2001:db8::1"));
  });
});
