import { describe, expect, it } from "vitest";
import {
  cidrContains,
  egressHostRuleSchema,
  egressRuleMatches,
  formatEgressHostRule,
  parseCidr,
  parseEgressHostRule,
} from "../src/index.ts";

describe("egress host rules", () => {
  it.each([
    ["api.openai.com", { host: "api.openai.com", wildcard: false, port: null }],
    ["LLM.corp.example:8443", { host: "llm.corp.example", wildcard: false, port: 8443 }],
    ["*.example.com", { host: "example.com", wildcard: true, port: null }],
    ["*.example.com:444", { host: "example.com", wildcard: true, port: 444 }],
    ["10.1.2.3:11434", { host: "10.1.2.3", wildcard: false, port: 11434 }],
    ["[fd00::1]:8080", { host: "fd00::1", wildcard: false, port: 8080 }],
    ["registry.npmjs.org.", { host: "registry.npmjs.org", wildcard: false, port: null }],
  ])("parses %s", (text, rule) => {
    expect(parseEgressHostRule(text)).toEqual(rule);
    expect(egressHostRuleSchema.safeParse(text).success).toBe(true);
  });

  it.each([
    "https://api.openai.com",
    "api.openai.com/v1",
    "host:0",
    "host:65536",
    "*.com",
    "*.10.0.0.1",
    "a b",
    "user@host",
    "",
    "fd00::1:8080x",
  ])("refuses %j", (text) => {
    expect(parseEgressHostRule(text)).toBeNull();
    expect(egressHostRuleSchema.safeParse(text).success).toBe(false);
  });

  it("accepts a bare IPv6 literal in the schema", () => {
    expect(egressHostRuleSchema.safeParse("::1").success).toBe(true);
  });

  it("matches hosts and ports", () => {
    const plain = parseEgressHostRule("api.example.com");
    const ported = parseEgressHostRule("llm.corp:8443");
    const wild = parseEgressHostRule("*.example.com");
    if (!plain || !ported || !wild) throw new Error("rules must parse");
    expect(egressRuleMatches(plain, "api.example.com", 443, [443, 80])).toBe(true);
    expect(egressRuleMatches(plain, "api.example.com", 8443, [443, 80])).toBe(false);
    expect(egressRuleMatches(ported, "llm.corp", 8443, [443])).toBe(true);
    expect(egressRuleMatches(ported, "llm.corp", 443, [443])).toBe(false);
    expect(egressRuleMatches(wild, "a.b.example.com", 443, [443])).toBe(true);
    expect(egressRuleMatches(wild, "example.com", 443, [443])).toBe(false);
    expect(egressRuleMatches(wild, "badexample.com", 443, [443])).toBe(false);
    expect(formatEgressHostRule(wild)).toBe("*.example.com");
    expect(formatEgressHostRule({ host: "::1", wildcard: false, port: 80 })).toBe("[::1]:80");
  });

  it("parses CIDRs and tests membership", () => {
    const ten = parseCidr("10.0.0.0/8");
    const host = parseCidr("127.0.0.1");
    const ula = parseCidr("fd00::/8");
    if (!ten || !host || !ula) throw new Error("CIDRs must parse");
    expect(cidrContains(ten, "10.200.3.4")).toBe(true);
    expect(cidrContains(ten, "11.0.0.1")).toBe(false);
    expect(cidrContains(host, "127.0.0.1")).toBe(true);
    expect(cidrContains(host, "127.0.0.2")).toBe(false);
    expect(cidrContains(host, "::ffff:127.0.0.1")).toBe(true);
    expect(cidrContains(ula, "fd12::1")).toBe(true);
    expect(cidrContains(ula, "fe80::1")).toBe(false);
    expect(parseCidr("10.0.0.0/33")).toBeNull();
    expect(parseCidr("nonsense")).toBeNull();
  });
});
