import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { BwrapDriver, SandboxCapabilities } from "../../src/index.ts";
import {
  createWorkspace,
  disposeDrivers,
  newDriver,
  type OutsideWitness,
  type SandboxWorkspace,
  useSandboxSpawnMode,
  witnessFor,
} from "./sandbox-fixture.ts";

/** The bwrap driver of the adversarial suites (one per file), its capabilities, and each test's workspace. */
export let driver: BwrapDriver;
export let caps: SandboxCapabilities;
export let ws: SandboxWorkspace;
export let witness: OutsideWitness;

/**
 * The hooks of an adversarial suite: one driver per file, a fresh workspace per test whose
 * outside (the other project, unrelated host files, the read-only git dir, a canary in /root)
 * is fingerprinted before the test and must be unchanged after it.
 */
export function useAdversarialSandbox(): void {
  useSandboxSpawnMode();
  beforeAll(async () => {
    driver = newDriver();
    caps = await driver.capabilities();
  });
  afterAll(disposeDrivers);
  beforeEach(async () => {
    ws = await createWorkspace();
    witness = witnessFor(ws);
    await witness.capture();
  });
  afterEach(async () => {
    await witness.assertUnchanged();
    await ws.dispose();
  });
}
