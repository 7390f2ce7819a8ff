import { describe, expect, it } from "vitest";
import { buildSeccompFilter, seccompSupported } from "../src/seccomp-filter.ts";

describe("buildSeccompFilter", () => {
  it.each(["x64", "arm64"])("assembles a valid classic-BPF program for %s", (arch) => {
    const program = buildSeccompFilter(arch);
    expect(program).not.toBeNull();
    const bytes = program as Buffer;
    expect(bytes.length % 8).toBe(0);
    const count = bytes.length / 8;
    for (let i = 0; i < count; i++) {
      const code = bytes.readUInt16LE(i * 8);
      const jt = bytes.readUInt8(i * 8 + 2);
      const jf = bytes.readUInt8(i * 8 + 3);
      if ((code & 0x07) === 0x05) {
        // conditional jumps stay inside the program
        expect(i + 1 + jt).toBeLessThan(count);
        expect(i + 1 + jf).toBeLessThan(count);
      }
    }
    // The last instructions are the verdicts: allow, EPERM, ENOSYS.
    expect(bytes.readUInt32LE((count - 3) * 8 + 4)).toBe(0x7fff0000);
    expect(bytes.readUInt32LE((count - 2) * 8 + 4)).toBe(0x00050001);
    expect(bytes.readUInt32LE((count - 1) * 8 + 4)).toBe(0x00050026);
  });

  it("has no table for other architectures", () => {
    expect(buildSeccompFilter("riscv64")).toBeNull();
    expect(seccompSupported("riscv64")).toBe(false);
  });
});
