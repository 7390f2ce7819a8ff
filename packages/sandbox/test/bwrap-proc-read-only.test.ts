import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { BWRAP_COVERED_PROC, PROC_READ_ONLY } from "../src/bwrap-argv-builder.ts";
import { createWorkspace, disposeDrivers, newDriver, runShell } from "./helpers/sandbox-fixture.ts";

/**
 * The /proc entries kept read-only inside a bwrap sandbox: the driver's own binds
 * (PROC_READ_ONLY) and the ones it leaves to bwrap's `--proc` (BWRAP_COVERED_PROC). If a bwrap
 * stopped covering an entry, this fails and the entry goes back to PROC_READ_ONLY.
 */

afterAll(disposeDrivers);

/** Mount point → mount options, from a mountinfo text (`/proc/self/mountinfo` inside the sandbox). */
function mountOptions(mountinfo: string): Map<string, string[]> {
  const mounts = new Map<string, string[]>();
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    if (fields.length > 5) mounts.set(fields[4] as string, (fields[5] as string).split(","));
  }
  return mounts;
}

describe("BwrapDriver: /proc knobs", () => {
  it.each([
    ...PROC_READ_ONLY.map((entry) => [entry, "the driver's bind"]),
    ...BWRAP_COVERED_PROC.map((entry) => [entry, "bwrap's --proc"]),
  ])("/proc/%s, where the host has it, is a read-only mount inside (%s)", async (entry) => {
    const ws = await createWorkspace();
    try {
      const result = await runShell(newDriver(), "cat /proc/self/mountinfo", ws.spec());
      expect(result.exitCode).toBe(0);
      const options = mountOptions(result.stdout).get(`/proc/${entry}`);
      if (!existsSync(`/proc/${entry}`)) expect(options).toBeUndefined();
      else expect(options).toEqual(expect.arrayContaining(["ro", "nosuid", "nodev"]));
    } finally {
      await ws.dispose();
    }
  });

  const knob = "/proc/irq/default_smp_affinity";
  it.skipIf(!existsSync(knob))(
    "cannot write an irq knob that file ownership alone would let its host uid 0 write",
    async () => {
      const before = await readFile(knob, "utf8");
      const ws = await createWorkspace();
      try {
        // Writes the CURRENT value back, so the test is harmless even if containment failed.
        const result = await runShell(
          newDriver(),
          `v=$(cat ${knob}) && { echo "$v" > ${knob} && echo WROTE; } 2>&1; echo end`,
          ws.spec(),
        );
        expect(result.stdout).toContain("Read-only file system");
        expect(result.stdout).not.toContain("WROTE");
        expect(result.stdout).toContain("end");
        expect(await readFile(knob, "utf8")).toBe(before);
      } finally {
        await ws.dispose();
      }
    },
  );
});
