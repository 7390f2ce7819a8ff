#!/usr/bin/env node
/**
 * Sums a `node --cpu-prof` profile (the scale bench's `--scale-coordinator-cpu-prof`,
 * `--scale-gateway-cpu-prof`, `--scale-worker-cpu-prof`) by module and by function:
 *
 *   node scripts/cpuprofile-summary.mjs FILE.cpuprofile [--top 40] [--from S] [--to S]
 *     [--callers NAME]
 *
 * `--from`/`--to` keep the samples between those seconds after the profile's start (a service's
 * start-up, module loading and first compilations, fills its first seconds; `--timeline` prints
 * the busy ms per second to find the phase). `--callers NAME` groups the time under functions
 * named NAME by the stack above them (node's internals skipped). Times are the V8 sampler's: on
 * a loaded machine a thread preempted inside a syscall is charged to that syscall, so compare
 * shares between runs, and take CPU time from /proc (the bench's busy.cpuMsPerTask).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: "string", default: "40" },
    from: { type: "string", default: "0" },
    to: { type: "string", default: "1e9" },
    callers: { type: "string" },
    timeline: { type: "boolean", default: false },
  },
});
const file = positionals[0];
if (!file) {
  process.stderr.write("usage: cpuprofile-summary.mjs FILE.cpuprofile [--top N] [--from S] [--to S]\n");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);

/** µs per sampled node within the window, and the busy µs per second of the profile. */
const sampled = new Map();
const perSecond = new Map();
const fromUs = Number(values.from) * 1e6;
const toUs = Number(values.to) * 1e6;
let clock = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  clock += us;
  const idle = byId.get(id).callFrame.functionName === "(idle)";
  const second = Math.floor(clock / 1e6);
  if (!idle) perSecond.set(second, (perSecond.get(second) ?? 0) + us);
  if (clock >= fromUs && clock <= toUs && !idle) sampled.set(id, (sampled.get(id) ?? 0) + us);
});

const shortUrl = (url) =>
  url
    .replace(/^file:\/\//, "")
    .replace(/.*node_modules\//, "nm:")
    .replace(/.*\/(services|packages|apps)\//, "$1/");
const frameName = (frame) =>
  `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber}`;
const moduleOf = (frame) => {
  if (!frame.url) return frame.functionName;
  return shortUrl(frame.url)
    .replace(/^nm:((@[^/]+\/)?[^/]+).*/, "nm:$1")
    .replace(/^((services|packages|apps)\/[^/]+).*/, "$1");
};

const busy = [...sampled.values()].reduce((a, b) => a + b, 0);
const top = Number(values.top);
const print = (title, totals) => {
  process.stdout.write(`--- ${title}\n`);
  for (const [key, us] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = ((100 * us) / Math.max(1, busy)).toFixed(1);
    process.stdout.write(`${(us / 1e3).toFixed(0).padStart(7)} ms ${share.padStart(5)} %  ${key}\n`);
  }
};
const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);

if (values.timeline) {
  const line = [...perSecond].map(([s, us]) => `${s}s:${(us / 1e3).toFixed(0)}`).join(" ");
  process.stdout.write(`busy ms per second: ${line}\n`);
}
process.stdout.write(`busy ${(busy / 1e3).toFixed(0)} ms in the window\n`);

if (values.callers) {
  const stacks = new Map();
  for (const [id, us] of sampled) {
    let at = id;
    while (at !== undefined && byId.get(at).callFrame.functionName !== values.callers) at = parentOf.get(at);
    if (at === undefined) continue;
    const chain = [];
    for (let up = parentOf.get(at); up !== undefined && chain.length < 6; up = parentOf.get(up)) {
      const frame = byId.get(up).callFrame;
      if (!frame.url.startsWith("node:")) chain.push(frameName(frame));
    }
    add(stacks, chain.join(" < "), us);
  }
  print(`callers of ${values.callers}`, stacks);
} else {
  const modules = new Map();
  const self = new Map();
  const inclusive = new Map();
  for (const [id, us] of sampled) {
    const frame = byId.get(id).callFrame;
    add(modules, moduleOf(frame), us);
    add(self, frameName(frame), us);
    const seen = new Set();
    for (let up = id; up !== undefined; up = parentOf.get(up)) {
      const name = frameName(byId.get(up).callFrame);
      if (!seen.has(name)) add(inclusive, name, us);
      seen.add(name);
    }
  }
  print("by module (self)", modules);
  print("by function (self)", self);
  print("by function (inclusive)", inclusive);
}
